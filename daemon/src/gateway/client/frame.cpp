// daemon/src/gateway/client/frame.cpp - see frame.hpp and out_queue.hpp.
#include "gateway/client/frame.hpp"
#include "gateway/client/out_queue.hpp"

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

} // namespace chat_outboxd
