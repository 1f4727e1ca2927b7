// daemon/src/gateway/clients.cpp - see clients.hpp.
#include "gateway/clients.hpp"

namespace chat_outboxd {

FrameRef
MakeFrame(std::string_view text)
{
	auto f = std::make_shared<Frame>();
	f->bytes.reserve(LWS_PRE + text.size());
	f->bytes.assign(LWS_PRE, '\0');
	f->bytes.append(text);
	return f;
}

FrameRef
OutQueue::Pop()
{
	FrameRef f = std::move(items_[head_++]);
	bytes_ -= f->Text().size();
	if (head_ == items_.size())
		Clear();
	return f;
}

void
OutQueue::Clear()
{
	items_.clear();
	items_.shrink_to_fit();
	head_ = 0;
	bytes_ = 0;
}

void
KillAsync(struct lws *wsi)
{
	if (wsi)
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

void
WriteCloseFrame(struct lws *wsi, int code, const std::string &reason)
{
	std::string frame(LWS_PRE, '\0');
	frame.push_back(static_cast<char>((code >> 8) & 0xFF));
	frame.push_back(static_cast<char>(code & 0xFF));
	frame += reason;
	size_t n = frame.size() - LWS_PRE;
	// Opcode 4 is lws' internal LWS_WRITE_CLOSE (private in 4.1.6 headers).
	lws_write(wsi, reinterpret_cast<unsigned char *>(&frame[LWS_PRE]), n, static_cast<enum lws_write_protocol>(4));
}

void
Session::AskWriteable()
{
	if (transport == Transport::WebSocket && ws)
		lws_callback_on_writable(ws);
	else if (held_get)
		lws_callback_on_writable(held_get);
}

void
PlainClient::AskWriteable()
{
	if (wsi)
		lws_callback_on_writable(wsi);
}

bool
PlainClient::WriteControl(struct lws *w)
{
	if (!ping_due)
		return true;
	ping_due = false;
	// lws 4.1 swallows empty pongs without a RECEIVE_PONG callback: the ping carries a payload.
	unsigned char ping[LWS_PRE + 2] = {};
	ping[LWS_PRE] = 'k';
	ping[LWS_PRE + 1] = 'a';
	return lws_write(w, ping + LWS_PRE, 2, LWS_WRITE_PING) >= 2;
}

} // namespace chat_outboxd
