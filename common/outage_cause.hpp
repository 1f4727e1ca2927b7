// common/outage_cause.hpp - what an outage's log line names as its cause: one rule for the relays'
// "redis unreachable" (common/relay/relay_health.hpp) and chat-outboxd's (StateLog, daemon/src/base/log.hpp).
//
// An outage is logged when it starts and once for each other cause it meets (a connection cut, then a
// certificate that expired meanwhile), never per attempt: however two connections failing for two
// causes alternate, each cause is one line. Where the failure was met is no new cause: a cluster's
// masters one after another, its slot map. Pure, so it is tested without servers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace chat_outbox {

// OutageCause: a failure's reason without where it was met: its last part after ": " ("redis cluster:
// master 127.0.0.1:7001: connect: TLS: server certificate verify failed: certificate has expired" ->
// "certificate has expired"), the whole reason when it has none.
inline std::string_view
OutageCause(std::string_view why)
{
	size_t at = why.rfind(": ");
	return at == std::string_view::npos ? why : why.substr(at + 2);
}

// OutageCauses: the causes one outage has logged. Bounded: past kMax causes the outage goes on quietly.
class OutageCauses {
  public:
	static constexpr size_t kMax = 8;

	// Note: true when `why`'s cause is new to this outage (log it); it is remembered.
	bool
	Note(std::string_view why)
	{
		std::string_view cause = OutageCause(why);
		if (causes_.size() >= kMax || std::find(causes_.begin(), causes_.end(), cause) != causes_.end())
			return false;
		causes_.emplace_back(cause);
		return true;
	}
	// Clear: the outage is over (or a new one starts).
	void Clear() { causes_.clear(); }

  private:
	std::vector<std::string> causes_;
};

} // namespace chat_outbox
