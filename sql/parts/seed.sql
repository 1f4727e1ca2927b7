REVOKE ALL ON FUNCTION chat_outbox.create_service(text, text, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION chat_outbox.set_partitions(text, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION chat_outbox.grant_service(text, name, boolean) FROM PUBLIC;

-- The seed's two services: consumers -> workers on chat-messages, workers -> consumers on chat-replies.
SELECT chat_outbox.create_service('consumers', 'chat-messages');
SELECT chat_outbox.create_service('workers', 'chat-replies');
