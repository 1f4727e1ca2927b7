// daemon/src/gateway/engineio/http_polling.cpp - EngineIo's HTTP long-polling transport: the handshake GET,
// held GETs that carry server packets (joined by 0x1E), POSTs that carry client packets, and the HTTP
// errors (docs/protocols/socketio.md, 'Polling transport', 'Requests and HTTP errors').
#include "base/log.hpp"
#include "gateway/engineio/core/engineio.hpp"
#include "gateway/engineio/engine_io.hpp"
#include "gateway/hub/hub.hpp"

namespace chat_outboxd {

namespace {
constexpr const char *kText = "text/plain; charset=UTF-8";
constexpr const char *kJson = "application/json";
// A held GET takes at most this many bytes of queued packets (at least one); the client polls
// again for the rest. The body and its HTTP copy stay small whatever the queue holds.
constexpr size_t kMaxPollResponse = 1 << 20;
} // namespace

int
EngineIo::OnPolling(struct lws *wsi, Conn *c, const QueryArgs &q)
{
	std::string method = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI)       ? "GET"
	                     : lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI)    ? "POST"
	                     : lws_hdr_total_length(wsi, WSI_TOKEN_OPTIONS_URI) ? "OPTIONS"
	                                                                        : "OTHER";
	eio::Verdict v = eio::Classify({method, q.Get("EIO"), q.Get("transport"), q.Get("sid"), false});
	if (v.kind == eio::RequestKind::Preflight) {
		Respond(wsi, c, 204, kText, "");
		return 0;
	}
	if (v.kind == eio::RequestKind::Invalid) {
		Respond(wsi, c, v.error == eio::HttpError::Forbidden ? 403 : 400, kJson, eio::ErrorBody(v.error));
		return 0;
	}
	if (v.kind == eio::RequestKind::Handshake) {
		auto s = NewSession(Session::Transport::Polling, PeerAddress(wsi));
		if (!s) {
			Respond(wsi, c, 429, kJson, eio::ErrorBody(eio::HttpError::TooManySessions));
			return 0;
		}
		s->query_token = q.Get("token");
		c->session = nullptr;
		Respond(wsi, c, 200, kText, eio::OpenPacket(s->sid, true, cfg_.ping_interval, cfg_.ping_timeout, cfg_.max_payload));
		StartHeartbeat(*s);
		return 0;
	}
	std::shared_ptr<Session> s = FindSession(q.Get("sid"));
	if (!s || s->IsClosed()) {
		Respond(wsi, c, 400, kJson, eio::ErrorBody(eio::HttpError::SessionUnknown));
		return 0;
	}
	if (s->transport == Session::Transport::WebSocket) { // upgraded: polling on this sid is over
		Respond(wsi, c, 400, kJson, eio::ErrorBody(eio::HttpError::BadRequest));
		return 0;
	}
	if (v.kind == eio::RequestKind::Poll) {
		if (s->held_get) {
			// Overlapping GETs are fatal to the session (reference behaviour).
			Respond(wsi, c, 400, kJson, eio::ErrorBody(eio::HttpError::BadRequest));
			Close(*s, LWS_CLOSE_STATUS_POLICY_VIOLATION, "overlapping polling GET");
			return 0;
		}
		c->role = Conn::Role::PollGet;
		c->session = s;
		s->held_get = wsi;
		// Held until there is something to send; the ping guarantees that within pingInterval.
		lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
		if (!s->out.Empty() || s->transport == Session::Transport::Upgrading || s->life == Client::Life::Closing)
			lws_callback_on_writable(wsi);
		return 0;
	}
	// POST. One that declares more than --max-payload is refused at once: reading (and dropping) its
	// body first would let a client make the daemon take in any amount before it hears no.
	if (eio::DeclaredBodyTooLarge(Header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH), cfg_.max_payload)) {
		Respond(wsi, c, 413, kJson, eio::ErrorBody(eio::HttpError::BadRequest));
		c->close_after = true;
		hub_.Reject(*s, "polling body over --max-payload", LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE);
		return 0;
	}
	if (s->post_busy) {
		Respond(wsi, c, 400, kJson, eio::ErrorBody(eio::HttpError::BadRequest));
		Close(*s, LWS_CLOSE_STATUS_POLICY_VIOLATION, "overlapping polling POST");
		return 0;
	}
	s->post_busy = true;
	c->role = Conn::Role::PollPost;
	c->session = s;
	c->rx.clear();
	c->rx_too_big = false;
	return 0;
}

int
EngineIo::OnPollBody(struct lws *, Conn *c, const void *in, size_t len)
{
	if (c->role != Conn::Role::PollPost || c->rx_too_big)
		return 0;
	if (c->rx.size() + len > static_cast<size_t>(cfg_.max_payload)) {
		c->rx_too_big = true;
		c->rx.clear();
		c->rx.shrink_to_fit();
		return 0;
	}
	c->rx.append(static_cast<const char *>(in), len);
	return 0;
}

int
EngineIo::OnPollBodyDone(struct lws *wsi, Conn *c)
{
	if (c->role != Conn::Role::PollPost) {
		if (!c->response_ready)
			Respond(wsi, c, 404, kText, "not found\n");
		return 0;
	}
	std::shared_ptr<Session> s = c->session;
	c->session = nullptr;
	std::string body = std::move(c->rx);
	c->rx.clear();
	if (!s || s->IsClosed()) {
		Respond(wsi, c, 400, kJson, eio::ErrorBody(eio::HttpError::SessionUnknown));
		return 0;
	}
	s->post_busy = false;
	if (c->rx_too_big) {
		Respond(wsi, c, 413, kJson, eio::ErrorBody(eio::HttpError::BadRequest));
		hub_.Reject(*s, "polling body over --max-payload", LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE);
		return 0;
	}
	std::vector<std::string_view> packets;
	if (!eio::ValidUtf8(body) || !eio::SplitPayload(body, &packets)) {
		Respond(wsi, c, 400, kJson, eio::ErrorBody(eio::HttpError::BadRequest));
		hub_.Reject(*s, "malformed polling body", LWS_CLOSE_STATUS_POLICY_VIOLATION);
		return 0;
	}
	for (std::string_view p : packets) {
		if (!HandleEngineText(s, p)) {
			Respond(wsi, c, 400, kJson, eio::ErrorBody(eio::HttpError::BadRequest));
			hub_.Reject(*s, "malformed packet", LWS_CLOSE_STATUS_POLICY_VIOLATION);
			return 0;
		}
		if (s->IsClosed())
			break;
	}
	Respond(wsi, c, 200, "text/html", "ok");
	return 0;
}

int
EngineIo::WritePollResponse(struct lws *wsi, Conn *c)
{
	std::shared_ptr<Session> s = c->session;
	if (!s)
		return -1;
	std::string body;
	if (!s->IsOpen()) {
		body = "1"; // server-side close, as the reference answers the held GET
	} else if (!s->out.Empty()) {
		while (!s->out.Empty() && (body.empty() || body.size() + s->out.Front().Text().size() < kMaxPollResponse))
			eio::AppendRecord(&body, s->out.Pop()->Text());
	} else if (s->transport == Session::Transport::Upgrading) {
		body = "6"; // release the GET so the client can finish the upgrade
	} else {
		return 0; // spurious wake-up: keep holding
	}
	s->held_get = nullptr;
	c->session = nullptr;
	c->role = Conn::Role::Http;
	bool finish = s->life == Client::Life::Closing;
	int rc = http_.Write(wsi, 200, kText, body, true);
	if (finish)
		Drop(*s);
	else
		hub_.Drained(*s);
	return rc;
}

void
EngineIo::OnHttpClosed(struct lws *wsi, Conn *c)
{
	if (c->session) {
		if (c->session->held_get == wsi)
			c->session->held_get = nullptr;
		if (c->role == Conn::Role::PollPost)
			c->session->post_busy = false;
		c->session = nullptr;
	}
	c->role = Conn::Role::Http;
}

} // namespace chat_outboxd
