// tests/unit/gateway/head_reader_test.cpp - the head reader on a real libuv loop and real loopback
// sockets (no server behind it): a whole head is handed on still unread, also when it came in pieces;
// a percent-encoded NUL in the target is answered 400 and an endless head 431, each with
// Connection: close, and no such connection is handed on.
#include "gateway/http/head_reader.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using chat_outboxd::HeadReader;

namespace {

// A listening socket on 127.0.0.1 and a port the kernel picked.
int
Listen(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || listen(fd, 16) != 0)
		return -1;
	socklen_t len = sizeof a;
	getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
	*port = ntohs(a.sin_port);
	return fd;
}

int
Connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(static_cast<uint16_t>(port));
	EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
	return fd;
}

void
Send(int fd, const std::string &bytes)
{
	ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

// Loop is initialised before the reader, which makes its timers on it.
struct Loop {
	uv_loop_t loop;
	Loop() { uv_loop_init(&loop); }
};

struct Fixture : Loop {
	int port = 0;
	HeadReader reader{&loop, "--listen"};
	std::vector<int> handed; // descriptors handed on, in order

	Fixture()
	{
		int fd = Listen(&port);
		EXPECT_GE(fd, 0);
		EXPECT_TRUE(reader.Start(fd, [this](int h) { handed.push_back(h); }));
	}
	~Fixture()
	{
		reader.Close();
		uv_run(&loop, UV_RUN_DEFAULT);
		for (int fd : handed)
			close(fd);
		EXPECT_EQ(uv_loop_close(&loop), 0) << "a handle was left open";
	}
	// RunUntil runs the loop until done() holds (the tick timer wakes it at least once a second).
	void RunUntil(const std::function<bool()> &done)
	{
		for (int i = 0; i < 200 && !done(); i++)
			uv_run(&loop, UV_RUN_ONCE);
		ASSERT_TRUE(done());
	}
	// Answered runs the loop until client's answer is in (readable), then reads it to the end.
	std::string Answered(int client)
	{
		RunUntil([&] {
			char c;
			return recv(client, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
		});
		shutdown(client, SHUT_WR); // the reader drains until the client is done, then closes
		std::string got;
		for (int i = 0; i < 200; i++) {
			char buf[4096];
			ssize_t n = recv(client, buf, sizeof buf, MSG_DONTWAIT);
			if (n == 0)
				return got;
			if (n > 0)
				got.append(buf, static_cast<size_t>(n));
			else
				uv_run(&loop, UV_RUN_ONCE);
		}
		ADD_FAILURE() << "the connection was not closed after: " << got;
		return got;
	}
};

const std::string kHead = "GET /socket.io/?EIO=4&transport=polling HTTP/1.1\r\nHost: x\r\n\r\n";

} // namespace

TEST(HeadReader, HandsOnAWholeHeadUnread)
{
	Fixture f;
	int client = Connect(f.port);
	Send(client, kHead + "body");
	f.RunUntil([&] { return f.handed.size() == 1; });
	char buf[256];
	ssize_t n = recv(f.handed[0], buf, sizeof buf, MSG_DONTWAIT);
	EXPECT_EQ(std::string(buf, static_cast<size_t>(std::max<ssize_t>(n, 0))), kHead + "body");
	close(client);
}

TEST(HeadReader, WaitsForAHeadSentInPieces)
{
	Fixture f;
	int client = Connect(f.port);
	// Each piece is in before the loop runs, so each run (the accept, then the socket's readable event)
	// looks at one more piece.
	Send(client, kHead.substr(0, 20));
	uv_run(&f.loop, UV_RUN_ONCE);
	Send(client, kHead.substr(20, 20));
	uv_run(&f.loop, UV_RUN_ONCE);
	EXPECT_TRUE(f.handed.empty());
	Send(client, kHead.substr(40));
	f.RunUntil([&] { return f.handed.size() == 1; });
	char buf[256];
	ssize_t n = recv(f.handed[0], buf, sizeof buf, MSG_DONTWAIT);
	EXPECT_EQ(std::string(buf, static_cast<size_t>(std::max<ssize_t>(n, 0))), kHead);
	close(client);
}

TEST(HeadReader, AnswersABadTarget)
{
	Fixture f;
	int client = Connect(f.port);
	Send(client, "GET /a%00b HTTP/1.1\r\nHost: x\r\n\r\n");
	std::string got = f.Answered(client);
	EXPECT_EQ(got, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: 19\r\n"
	               "Connection: close\r\n\r\nbad request target\n");
	EXPECT_TRUE(f.handed.empty());
	close(client);
}

TEST(HeadReader, AnswersAHeadTooLarge)
{
	Fixture f;
	int client = Connect(f.port);
	Send(client, "GET / HTTP/1.1\r\nX-A: " + std::string(chat_outboxd::http::kMaxHeadBytes, 'a'));
	std::string got = f.Answered(client);
	EXPECT_EQ(got.substr(0, got.find("\r\n")), "HTTP/1.1 431 Request Header Fields Too Large");
	EXPECT_NE(got.find("\r\nConnection: close\r\n"), std::string::npos) << got;
	EXPECT_TRUE(f.handed.empty());
	close(client);
}
