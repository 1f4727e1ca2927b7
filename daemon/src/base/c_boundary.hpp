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

// CallFromC for a callback that answers the C library: fn's result, or on_exception after an
// exception (for example -1, "close this connection", to libwebsockets).
template <typename R, typename F>
R
CallFromC(const char *who, const char *where, R on_exception, F &&fn) noexcept
{
	try {
		return fn();
	} catch (const std::exception &e) {
		Log(Level::Warning, "%s: exception in %s: %s", who, where, e.what());
	} catch (...) {
		Log(Level::Warning, "%s: unknown exception in %s", who, where);
	}
	return on_exception;
}

// CallFromC runs fn; an exception is logged as "<who>: exception in <where>: <what>" and stops there.
// who and where must outlive fn: string literals, or a name held by something fn does not destroy.
template <typename F>
void
CallFromC(const char *who, const char *where, F &&fn) noexcept
{
	CallFromC(who, where, 0, [&] {
		fn();
		return 0;
	});
}

} // namespace chat_outboxd
