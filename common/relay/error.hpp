// common/relay/error.hpp - the one exception type core code throws.
//
// It carries a SQLSTATE so the PG-zone boundary (pg/cpp_boundary.hpp) can report a proper
// errcode instead of the generic XX000.
#pragma once

#include <stdexcept>
#include <string>

namespace chat_outbox {

class Error : public std::runtime_error {
  public:
	Error(const char *sqlstate, const std::string &message, std::string detail = {})
	    : std::runtime_error(message), detail_(std::move(detail))
	{
		for (int i = 0; i < 5; i++)
			sqlstate_[i] = sqlstate[i];
		sqlstate_[5] = '\0';
	}

	const char *
	SqlState() const
	{
		return sqlstate_;
	}

	const std::string &
	Detail() const
	{
		return detail_;
	}

  private:
	char sqlstate_[6];
	std::string detail_;
};

} // namespace chat_outbox
