// tests/unit/gateway/web_files_test.cpp - request paths that may name a file under --web-root, and types.
#include <gtest/gtest.h>

#include <string>

#include "gateway/http/core/web_files.hpp"

using namespace chat_outboxd;

TEST(WebFiles, MapsPathsInsideTheRoot)
{
	EXPECT_EQ(web::RelativePath("/"), "index.html");
	EXPECT_EQ(web::RelativePath("/app.js"), "app.js");
	EXPECT_EQ(web::RelativePath("/img/logo.svg"), "img/logo.svg");
	EXPECT_EQ(web::RelativePath("/img/"), "img/index.html");
	EXPECT_EQ(web::RelativePath("/a..b.js"), "a..b.js"); // dots inside a name are fine
}

TEST(WebFiles, RefusesAnythingThatCouldLeaveTheRoot)
{
	for (const char *p : {"", "app.js", "/..", "/../etc/passwd", "/img/../../x", "/./app.js", "/img/./x", "//etc/passwd",
	                      "/img//x", "/.env", "/img/.git/config", "/a\\..\\b", "/..\\x"})
		EXPECT_EQ(web::RelativePath(p), "") << p;
	EXPECT_EQ(web::RelativePath(std::string("/a\0b", 4)), "");
	EXPECT_EQ(web::RelativePath("/a\nb"), "");
	EXPECT_EQ(web::RelativePath("/" + std::string(300, 'a')), "");
}

TEST(WebFiles, TypesOnlyWhatTheClientUses)
{
	EXPECT_STREQ(web::ContentType("index.html"), "text/html; charset=UTF-8");
	EXPECT_STREQ(web::ContentType("socket.io.min.js"), "text/javascript; charset=UTF-8");
	EXPECT_STREQ(web::ContentType("style.css"), "text/css; charset=UTF-8");
	EXPECT_STREQ(web::ContentType("web-client.png"), "image/png");
	EXPECT_EQ(web::ContentType("secret.pem"), nullptr);
	EXPECT_EQ(web::ContentType("Makefile"), nullptr);
	EXPECT_EQ(web::ContentType(".js"), nullptr);
}
