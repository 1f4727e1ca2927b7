// daemon/src/gateway/hub/catchup.hpp - replays from the durable inbox: a catch-up for a client that
// reconnects with an offset, and the reading-on of a client that fell behind live delivery; and the
// highest seq the gateway knows (put into Socket.IO pids and the /ws welcome).
//
// Clients of the same chats share their pages: each waits in its chats' line (BatchLines), one page is read
// for the line from its lowest cursor while no other read of those chats is out, and each client is handed
// the page from its own cursor (CatchupPage). So a storm of N reconnects into one chat costs O(pages) round
// trips, not N times that. A line is keyed by the exact set of chats: a client's replay must give it every
// message of its chats in seq order, and a page read for more chats than its own would make it page past
// rows it does not get.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/core/config.hpp"
#include "gateway/client/client.hpp"
#include "gateway/hub/core/batch_lines.hpp"
#include "gateway/hub/core/catchup_page.hpp"
#include "inbox/core/delivery.hpp"

namespace chat_outboxd {

class Hub;
class QueryQueue;

class Catchup {
  public:
	Catchup(Hub &hub, QueryQueue &queries, const Config &cfg);
	Catchup(const Catchup &) = delete;
	Catchup &operator=(const Catchup &) = delete;

	// Start replays every message of c's rooms with seq > after, before any live one.
	void Start(const std::shared_ptr<Client> &c, int64_t after);
	// Page puts c in its chats' line for its next page (read at once when no read of them is out and
	// --query-queue has room).
	void Page(const std::shared_ptr<Client> &c);

  private:
	using Chats = std::vector<int64_t>; // a line's key: its clients' joined chats (sorted)
	struct Reader {
		std::weak_ptr<Client> client;
		uint32_t run; // the replay it waits for (Client::replay_run)
	};
	// ReadPages starts the read of every ready line while --query-queue has room (the rest go on when a
	// slot frees: QueryQueue::OnSlotFree).
	void ReadPages();
	void Read(const Chats &chats);
	// HandOut gives one reader its part of a page, and ends or goes on with its replay.
	// frames: each row's frame per protocol ([true]: Socket.IO, [false]: /ws), made for the first reader that gets it.
	void HandOut(Client &c, const CatchupPage &page, const std::vector<InboxMessage> &rows,
	             std::vector<FrameRef> (&frames)[2]);

	Hub &hub_;
	QueryQueue &queries_;
	const Config &cfg_;
	std::string sql_page_[2]; // [with_sender] (QueryQueue::Schema)
	BatchLines<Chats, Reader> lines_;
};

} // namespace chat_outboxd
