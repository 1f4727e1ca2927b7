// daemon/src/gateway/client/frame.hpp - Frame: one encoded text message as every client is sent it,
// built once per broadcast and shared by every socket in the room.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <libwebsockets.h>

namespace chat_outboxd {

// Frame is one encoded text message with LWS_PRE bytes of headroom, so lws can write the WebSocket
// header in place. A broadcast builds one Frame and every socket in the room queues the same one.
struct Frame {
	std::string bytes;
	std::string_view Text() const { return std::string_view(bytes).substr(LWS_PRE); }
};
using FrameRef = std::shared_ptr<Frame>;
FrameRef MakeFrame(std::string_view text);

} // namespace chat_outboxd
