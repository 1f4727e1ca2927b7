// daemon/src/gateway/conversation/core/unread_batch.cpp - see unread_batch.hpp.
#include "gateway/conversation/core/unread_batch.hpp"

namespace chat_outboxd::conv {

namespace {

// AppendElement appends a text[] element: NULL, or the text in double quotes with " and \ escaped.
void
AppendElement(std::string *out, const std::optional<std::string> &user)
{
	if (!user) {
		*out += "NULL";
		return;
	}
	*out += '"';
	for (char ch : *user) {
		if (ch == '"' || ch == '\\')
			*out += '\\';
		*out += ch;
	}
	*out += '"';
}

} // namespace

size_t
UnreadUserBytes(const std::optional<std::string> &user)
{
	std::string s;
	AppendElement(&s, user);
	return s.size() + 1;
}

size_t
UnreadBatch::Add(const std::optional<std::string> &user)
{
	if (!user) {
		if (no_identity_ == npos) {
			no_identity_ = users_.size();
			users_.push_back(std::nullopt);
		}
		return no_identity_;
	}
	auto [it, added] = index_.emplace(*user, users_.size());
	if (added)
		users_.push_back(user);
	return it->second;
}

size_t
UnreadBatch::Find(const std::optional<std::string> &user) const
{
	if (!user)
		return no_identity_;
	auto it = index_.find(*user);
	return it == index_.end() ? npos : it->second;
}

std::string
UnreadBatch::ArrayLiteral() const
{
	std::string s = "{";
	for (size_t i = 0; i < users_.size(); i++) {
		if (i)
			s += ',';
		AppendElement(&s, users_[i]);
	}
	return s + "}";
}

} // namespace chat_outboxd::conv
