// common/relay/redis_server_link.hpp - a relay's link to one Redis server (common/relay/redis_link.hpp):
// blocking, with a timeout, plaintext or TLS (common/redis_blocking.hpp), the master found directly or
// by its Sentinels.
//
// One connection, the handshake of common/redis_handshake (AUTH, SELECT; ROLE after Sentinel
// discovery), SCRIPT LOAD of the batch-add script and the durability check; then one EVALSHA per
// batch, encoded by EncodeBatchAdd, the extension's own encoder. Nothing is kept between batches but
// the connection. It is also the ClusterRouter's link to each master (Asking, ClusterSlots).
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/redis_blocking.hpp"
#include "common/redis_cluster.hpp"
#include "common/relay/redis_link.hpp"

namespace chat_outbox {

class RedisServerLink final : public RedisLink {
  public:
	RedisServerLink(RedisUrl url, int64_t timeout_ms, std::string prefix, int64_t min_replicas = 0);
	~RedisServerLink() override;

	std::vector<std::optional<std::string>> AddBatch(const std::string &queue, const LayoutCheck &layout,
	                                                 const MarkStep &mark, const JobSpec *jobs, size_t n) override;
	void ConfirmReplicated() override;
	std::optional<std::string> Get(const std::string &key) override;
	void Set(const std::string &key, const std::string &value) override;
	int64_t EvalInteger(const std::string &script, const std::vector<std::string> &keys) override;
	void Ping() override;
	void Disconnect() override;
	bool Connected() const override;
	int64_t Connects() const override { return connects_; }
	std::string Warning() const override;
	std::string Appendfsync() const override;
	int64_t ScriptReloads() const override;
	std::string TakeNotice() override;

	// A cluster node's link (ClusterRouter's): ASKING before the command an ASK redirection names,
	// and the slot map this node reports (CLUSTER SLOTS). Throw RedisFailure.
	void Asking();
	std::vector<SlotRange> ClusterSlots();

  private:
	void Connect();
	redisReply *Command(const std::vector<std::string> &argv); // caller frees; throws kConnection
	redisReply *Sent(const std::vector<std::string> &argv);    // Command, connecting first, once more if reused (OnceMoreIfReused)
	redisReply *Checked(const std::vector<std::string> &argv); // Sent; an error reply throws kService
	redisReply *Roundtrip(const std::string &resp);            // caller frees; throws kConnection
	[[noreturn]] void FailConnection(const std::string &what);
	// OnceMoreIfReused runs `send` (which connects when not connected) and, when it fails for its
	// connection and that connection was made before, once more on a new one. Redis closes a connection
	// that sat idle (a restart, CLIENT KILL, its timeout): that is no outage. Only for commands that are
	// safe twice (their first run may have happened): reads, the layout key's SET, a batch's adds (a
	// second add of an id is a BullMQ duplicate). Not WAIT: it counts its own connection's writes. A
	// timeout is not sent again: the server is there but slow, and a second try would double the wait.
	template <class Send>
	auto OnceMoreIfReused(Send &&send) -> decltype(send());

	RedisUrl url_;
	int64_t timeout_ms_;
	int64_t min_replicas_;
	size_t sentinel_cursor_ = 0;
	std::string master_; // redis-sentinel:// only: "host:port" last discovered
	std::string notice_;
	std::string prefix_;
	BlockingRedis conn_;
	std::string sha_;
	std::string warning_;
	std::string appendfsync_;
	int64_t script_reloads_ = 0;
	int64_t connects_ = 0; // connections made (Connects)
};

} // namespace chat_outbox
