// daemon/src/gateway/hub/core/catchup_page.hpp - CatchupPage: one replay page read for many clients of the
// same chats (gateway/hub/catchup.*), and what each of them gets of it.
//
// A page is read once from the lowest cursor of the clients that wait for it: the inbox's rows of their chats
// with seq > From(), in seq order, at most --catchup-limit rows and about --catchup-page-bytes. Rules:
// - A client whose cursor is c gets the page's rows with seq > c (FirstFor), in order: exactly what a read of
//   its own from c would begin with, since every row in (From(), last row] is in the page.
// - A page that the row limit filled or the byte limit cut (More) covers (From(), Last()]: each client reads
//   on after max(c, Last()). A page that neither filled nor cut holds every row above From() the query saw, so
//   it ends the replay of every client that read it (unless the client's held live messages were dropped
//   meanwhile: Catchup's rule, hub.hpp DropHeld).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace chat_outboxd {

// kCatchupBatchClients: the most clients one replay page is read for. Past it the rest of the line waits for
// the next read, so the list a page is handed to stays bounded however big the room; the page's own bytes
// are bounded by --catchup-page-bytes whatever the number of clients.
constexpr size_t kCatchupBatchClients = 1000;

class CatchupPage {
  public:
	// from: the lowest cursor asked; seqs: the page's rows' seqs, ascending; more: the row limit filled the
	// page or the byte limit cut it.
	CatchupPage(int64_t from, std::vector<int64_t> seqs, bool more) : from_(from), seqs_(std::move(seqs)), more_(more) {}

	int64_t From() const { return from_; }
	bool More() const { return more_; }
	// Last: the highest seq the page covers (From() when it is empty).
	int64_t Last() const { return seqs_.empty() ? from_ : seqs_.back(); }
	// FirstFor: the index of the first row a client at cursor gets (Size() when none).
	size_t FirstFor(int64_t cursor) const
	{
		return static_cast<size_t>(std::upper_bound(seqs_.begin(), seqs_.end(), cursor) - seqs_.begin());
	}
	size_t Size() const { return seqs_.size(); }
	// CursorAfter: where a client at cursor reads on from after this page.
	int64_t CursorAfter(int64_t cursor) const { return std::max(cursor, Last()); }

	// LowestCursor: the cursor a page for these clients is read from (their lowest; 0 for none).
	template <typename It, typename CursorOf>
	static int64_t LowestCursor(It first, It last, CursorOf cursor_of)
	{
		if (first == last)
			return 0;
		int64_t low = cursor_of(*first);
		for (It it = first; it != last; ++it)
			low = std::min(low, cursor_of(*it));
		return low;
	}

  private:
	int64_t from_;
	std::vector<int64_t> seqs_;
	bool more_;
};

} // namespace chat_outboxd
