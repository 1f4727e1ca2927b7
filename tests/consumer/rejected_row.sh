#!/usr/bin/env bash
# consumer.rejected_row: a message whose inbox row Postgres refuses (here a trigger raising for it) does not
# hold the queue: the batch is written one message at a time, the refused job gets another attempt after
# its backoff while its `attempts` allow (a real Queue.add with attempts 2, backoff fixed 300 ms) and then
# lands in the failed set with Postgres's reason; the messages around it are stored and delivered in order.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-rejected
Q=t-rejected
harness_psql "CREATE FUNCTION workers.refuse() RETURNS trigger LANGUAGE plpgsql AS \$\$
BEGIN
	IF NEW.body LIKE 'refuse%' THEN RAISE EXCEPTION 'this inbox refuses %', NEW.body; END IF;
	RETURN NEW;
END \$\$;
CREATE TRIGGER refuse BEFORE INSERT ON workers.inbox FOR EACH ROW EXECUTE FUNCTION workers.refuse();" >/dev/null
G1=$(uuid); BAD=$(uuid); G2=$(uuid); G3=$(uuid)
peer_bg events.log events $Q "$H_DIR/events.txt"
harness_wait_for 10 grep -q ready "$H_DIR/events.txt"
peer add-raw $Q "$G1" "{\"id\":\"$G1\",\"chat_id\":1,\"body\":\"good 1\"}"
peer add-raw $Q "$BAD" "{\"id\":\"$BAD\",\"chat_id\":1,\"body\":\"refuse me\"}" '{"attempts":2,"backoff":{"type":"fixed","delay":300}}'
peer add-raw $Q "$G2" "{\"id\":\"$G2\",\"chat_id\":1,\"body\":\"good 2\"}"

daemon_start daemon.log --service workers --queue $Q --batch-size 10
wait_counts $Q "c.completed === 2 && c.failed === 1 && c.active === 0 && c.waiting === 0 && c.delayed === 0" >/dev/null
expect_eq "the accepted messages, in order" "good 1,good 2" "$(harness_psql "SELECT string_agg(body, ',' ORDER BY seq) FROM workers.inbox")"
expect_eq "attempts made by the refused job" 2 "$(rcli hget "bull:$Q:$BAD" atm)"
expect_eq "its reason" "inbox refused the message: this inbox refuses refuse me (SQLSTATE P0001)" \
	"$(rcli hget "bull:$Q:$BAD" failedReason)"
harness_wait_for 10 grep -q "^failed $BAD" "$H_DIR/events.txt"
expect_eq "QueueEvents: retried once (delayed), then failed" "1 1" \
	"$(grep -c "^delayed $BAD" "$H_DIR/events.txt") $(grep -c "^failed $BAD" "$H_DIR/events.txt")"

# still consuming afterwards
peer add-raw $Q "$G3" "{\"id\":\"$G3\",\"chat_id\":2,\"body\":\"good 3\"}"
wait_inbox workers 3 10
echo PASS
