// daemon/src/consumer/core/bullmq_identity.hpp - who holds a job: lock tokens and the identity guard.
//
// Lock tokens are "<identity>:<run uuid>:<n>": the identity lets a restarted daemon recognise
// (and take back at once) the jobs its killed predecessor held; the run uuid keeps tokens unique
// across runs, and n across fetches. A token is never "0": BullMQ means "no lock" by it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chat_outboxd {

std::string NewUuid(); // random (v4)

// ValidIdentity: non-empty, printable, no spaces (CLIENT SETNAME) and no ':' (token prefix match).
bool ValidIdentity(const std::string &identity, std::string *error);

// ConnectionName is what the command connection sets with CLIENT SETNAME; two live connections
// with this name mean two daemons claim one identity.
std::string ConnectionName(const std::string &prefix, const std::string &queue, const std::string &identity);

struct ClientEntry {
	int64_t id = 0;
	std::string name;
};

// ParseClientList reads CLIENT LIST output ("id=5 addr=... name=x ...", one client a line).
std::vector<ClientEntry> ParseClientList(const std::string &text);

// IdentityClash says whether the client `my_id` must refuse to run: another client carries the
// same name and was there first (lower id).
bool IdentityClash(const std::vector<ClientEntry> &clients, const std::string &name, int64_t my_id,
                   int64_t *other_id);

} // namespace chat_outboxd
