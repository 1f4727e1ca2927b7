// daemon/src/base/log.cpp - see log.hpp.
#include "base/log.hpp"

#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <sys/time.h>
#include <unistd.h>

namespace chat_outboxd {

namespace {
Level g_level = Level::Notice;
const char kMarks[] = {'.', '-', '*', '#'}; // as Redis prints them
} // namespace

void
SetLogLevel(const std::string &name)
{
	if (name == "debug")
		g_level = Level::Debug;
	else if (name == "verbose")
		g_level = Level::Verbose;
	else if (name == "warning")
		g_level = Level::Warning;
	else
		g_level = Level::Notice;
}

bool
LogEnabled(Level level)
{
	return level >= g_level;
}

void
Log(Level level, const char *fmt, ...)
{
	if (!LogEnabled(level))
		return;
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct timeval tv;
	gettimeofday(&tv, nullptr);
	struct tm tm;
	localtime_r(&tv.tv_sec, &tm);
	char ts[64];
	strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(stderr, "%d %s.%03d %c %s\n", static_cast<int>(getpid()), ts, static_cast<int>(tv.tv_usec / 1000),
	        kMarks[static_cast<int>(level)], msg);
}

bool
StateLog::Down(const std::string &reason)
{
	if (!down_)
		causes_.Clear(); // an outage starts
	down_ = true;
	if (!causes_.Note(reason))
		return false;
	Log(Level::Warning, "%s unreachable: %s (retrying with backoff)", component_.c_str(), reason.c_str());
	return true;
}

void
StateLog::Up(const std::string &detail)
{
	if (down_)
		Log(Level::Notice, "%s back%s%s", component_.c_str(), detail.empty() ? "" : ", ", detail.c_str());
	else if (!ever_up_)
		Log(Level::Notice, "%s connected%s%s", component_.c_str(), detail.empty() ? "" : ", ", detail.c_str());
	down_ = false;
	ever_up_ = true;
}

} // namespace chat_outboxd
