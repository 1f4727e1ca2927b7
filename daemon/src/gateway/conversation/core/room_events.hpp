// daemon/src/gateway/conversation/core/room_events.hpp - what a gateway passes on of a chat's presence and typing
// events (docs/client-protocol.md "Presence", "Typing"), so a join/leave storm costs each socket O(1) frames per
// interval, not O(members). Pure: the gateway feeds it the chat's events as they come from Redis and calls Tick
// every interval (--presence-interval); nothing here reads a clock or sends.
//
// Rules (one owner: this class):
// - A chat is big while its online count (the users present, as the latest event or join said) is above the
//   threshold (--presence-threshold).
// - Presence in a small chat: a change goes out at once, as one `presence {user, present, online}`, while fewer
//   than kBurst frames went out for the chat in this interval; the rest wait for the interval's end and go out
//   as one frame with every change of the interval (joined / left, each user once, at most threshold of each,
//   then `more`).
// - Presence in a big chat: every change waits; at the interval's end one frame `presence {online, joined, left,
//   more}` with at most kBigDiff users of each list (`more` true when changes were left out).
// - Typing in a small chat goes out at once (as before); in a big chat each typist's latest state is kept and at
//   the interval's end one frame `typing {users:[{user, typing}], more}` carries at most kBigDiff of them.
// - What waits for a chat is bounded: at most kHeldUsers distinct users per chat and interval (the others only
//   set `more`), whatever a client joining and leaving in a loop does.
// - A user who joined and left again within the interval (or the reverse) is in neither list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace chat_outboxd::conv {

class RoomEvents {
  public:
	static constexpr size_t kBurst = 8;        // individual presence frames per small chat and interval
	static constexpr size_t kBigDiff = 20;     // users per list of a big chat's frame
	static constexpr size_t kHeldUsers = 1000; // distinct users held per chat and interval

	struct Frame {
		int64_t chat = 0;
		std::string event; // "presence" or "typing"
		nlohmann::json data;
	};

	explicit RoomEvents(int64_t threshold) : threshold_(threshold) {}

	// Online notes a chat's count (a join's answer from Redis); Big says whether the chat is big now.
	void Online(int64_t chat, int64_t online);
	bool Big(int64_t chat) const;
	// Presence: one user (key = "<service>\t<sub>", user = its JSON) came (present) or went; online is the chat's
	// count after it. Returns the frame to send at once, or null when it waits for Tick.
	nlohmann::json Presence(int64_t chat, const std::string &key, const nlohmann::json &user, bool present, int64_t online);
	// Typing: true when the event goes out at once as it is (a small chat); false when it waits for Tick.
	bool Typing(int64_t chat, const std::string &key, const nlohmann::json &user, bool typing);
	// Tick ends the interval: the frames that waited, one per chat and event, and every chat's burst restarts.
	std::vector<Frame> Tick();
	// Idle: nothing waits and no chat sent in this interval (the gateway may stop its timer).
	bool Idle() const { return chats_.empty(); }
	// Forget drops a chat this gateway no longer has clients in.
	void Forget(int64_t chat) { online_.erase(chat), chats_.erase(chat); }

  private:
	struct Change {
		nlohmann::json user;
		bool before = false; // the state before the interval's first change
		bool now = false;
	};
	struct Held {
		size_t sent = 0;                        // individual frames sent in this interval
		std::map<std::string, Change> presence; // by user key, in key order
		std::map<std::string, Change> typing;
		bool presence_more = false, typing_more = false;
		int64_t online = 0;
	};
	static bool Hold(std::map<std::string, Change> &m, bool &more, const std::string &key, const nlohmann::json &user,
	                 bool state);

	int64_t threshold_;
	std::map<int64_t, int64_t> online_;
	std::map<int64_t, Held> chats_; // only chats with something in this interval
};

} // namespace chat_outboxd::conv
