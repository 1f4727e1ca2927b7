// daemon/src/base/c_boundary.hpp - the one way a C library (libuv, hiredis, libpq, libwebsockets)
// calls into our C++.
//
// A C++ exception must never unwind through C frames: the C library's state would be left half
// updated, and unwinding through frames built without unwind tables terminates the process. So every
// callback we hand to C is noexcept and runs its body through CallFromC, which logs an exception
// (who and where it happened) and contains it. The callback's own state stays as the exception left
// it; callers keep their bodies small so that is never worse than a lost event.
#pragma once

#include <exception>

#include "base/log.hpp"

namespace chat_outboxd {

// CallFromC runs fn; an exception is logged as "<who>: exception in <where>: <what>" and stops there.
template <typename F>
void
CallFromC(const char *who, const char *where, F &&fn) noexcept
{
	try {
		fn();
	} catch (const std::exception &e) {
		Log(Level::Warning, "%s: exception in %s: %s", who, where, e.what());
	} catch (...) {
		Log(Level::Warning, "%s: unknown exception in %s", who, where);
	}
}

} // namespace chat_outboxd
