// daemon/src/bus/core/bus_codec.cpp - see bus_codec.hpp.
#include "bus/core/bus_codec.hpp"

#include <charconv>

namespace chat_outboxd {

namespace {

constexpr std::string_view kMagic = "cobus1 ";

std::string
Header(int64_t published_ms)
{
	return std::string(kMagic) + std::to_string(published_ms) + "\n";
}

// Reader takes a payload apart; every method returns false on malformed input.
struct Reader {
	std::string_view rest;

	bool Number(int64_t *out, char end)
	{
		const char *first = rest.data(), *last = rest.data() + rest.size();
		auto [p, ec] = std::from_chars(first, last, *out);
		if (ec != std::errc() || p == first || p == last || *p != end)
			return false;
		rest.remove_prefix(static_cast<size_t>(p - first) + 1);
		return true;
	}

	bool Bytes(int64_t n, std::string *out)
	{
		if (n < 0 || static_cast<uint64_t>(n) > rest.size())
			return false;
		out->assign(rest.data(), static_cast<size_t>(n));
		rest.remove_prefix(static_cast<size_t>(n));
		return true;
	}
};

} // namespace

std::vector<std::string>
EncodeBus(const std::vector<InboxMessage> &messages, int64_t published_ms)
{
	std::vector<std::string> out;
	std::string cur;
	for (const InboxMessage &m : messages) {
		if (cur.empty())
			cur = Header(published_ms);
		size_t row_bytes = m.id.size() + m.created_at.size() + m.body.size() + (m.sender ? m.sender->size() : 0);
		// An edit or delete, or a message that carries one (the `r` and `s` rows have no place for it),
		// goes as a notice: the gateways read it from the inbox.
		const bool changed = m.change != Change::None || !m.edited_at.empty() || !m.deleted_at.empty();
		if (row_bytes > kBusRowBytes || changed) {
			cur += "n " + std::to_string(m.seq) + " " + std::to_string(m.chat_id) + "\n";
		} else {
			cur += std::string(m.sender ? "s " : "r ") + std::to_string(m.seq) + " " + std::to_string(m.chat_id) + " " +
			       std::to_string(m.id.size()) + " " + std::to_string(m.created_at.size()) + " " +
			       std::to_string(m.body.size());
			if (m.sender)
				cur += " " + std::to_string(m.sender->size());
			cur += "\n";
			cur += m.id;
			cur += m.created_at;
			cur += m.body;
			if (m.sender)
				cur += *m.sender;
		}
		if (cur.size() >= kBusPayloadBytes)
			out.push_back(std::move(cur)), cur.clear();
	}
	if (!cur.empty())
		out.push_back(std::move(cur));
	return out;
}

std::optional<BusPayload>
DecodeBus(std::string_view payload)
{
	if (payload.substr(0, kMagic.size()) != kMagic)
		return std::nullopt;
	Reader r{payload.substr(kMagic.size())};
	BusPayload out;
	if (!r.Number(&out.published_ms, '\n'))
		return std::nullopt;
	while (!r.rest.empty()) {
		if (r.rest.size() < 2 || r.rest[1] != ' ')
			return std::nullopt;
		char kind = r.rest[0];
		r.rest.remove_prefix(2);
		BusEntry e;
		if (kind == 'n') {
			e.notice = true;
			if (!r.Number(&e.message.seq, ' ') || !r.Number(&e.message.chat_id, '\n'))
				return std::nullopt;
		} else if (kind == 'r' || kind == 's') {
			const bool with_sender = kind == 's';
			int64_t id_len = 0, created_len = 0, body_len = 0, sender_len = 0;
			if (!r.Number(&e.message.seq, ' ') || !r.Number(&e.message.chat_id, ' ') || !r.Number(&id_len, ' ') ||
			    !r.Number(&created_len, ' ') || !r.Number(&body_len, with_sender ? ' ' : '\n') ||
			    (with_sender && !r.Number(&sender_len, '\n')) || !r.Bytes(id_len, &e.message.id) ||
			    !r.Bytes(created_len, &e.message.created_at) || !r.Bytes(body_len, &e.message.body))
				return std::nullopt;
			if (with_sender && !r.Bytes(sender_len, &e.message.sender.emplace()))
				return std::nullopt;
		} else {
			return std::nullopt;
		}
		if (e.message.seq <= 0)
			return std::nullopt;
		out.entries.push_back(std::move(e));
	}
	return out;
}

} // namespace chat_outboxd
