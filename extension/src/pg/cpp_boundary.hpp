/*
 * extension/src/pg/cpp_boundary.hpp - the one crossing between Postgres code and C++.
 *
 * The rule has two halves, one per direction (docs/extension.md, 'C++ inside Postgres'):
 *  1. C++ -> Postgres: no C++ exception unwinds into Postgres' C frames (no unwind info:
 *     std::terminate, then a cluster restart).
 *  2. Postgres -> C++: no C++ object with a destructor is alive in a frame when Postgres may
 *     longjmp over it (ereport(ERROR), and so SPI, palloc and nearly every Postgres call): the
 *     destructor is skipped, so what the object owns leaks on every error.
 * So C++ objects with destructors live only inside a CallCpp body (or as members of objects that
 * outlive every frame, such as redis_sink.cpp's static sinks), and a CallCpp body calls no Postgres
 * function that may ereport: common/ never includes postgres.h. CallCpp runs the body inside try,
 * copies any failure into fixed buffers, lets every C++ object die with the try block, and only
 * then ereports, keeping the SQLSTATE the C++ code chose. Its static_assert keeps the closure
 * itself trivially destructible (it is alive while CallCpp ereports); the rest is checked on the
 * sources by tests/extension/cpp_boundary_lint.py (ctest extension.cpp_boundary).
 */
#pragma once

#include "pg/pg.hpp"

#include <exception>
#include <type_traits>

#include "common/relay/error.hpp"

namespace chat_outbox {

template <typename F>
void
CallCpp(F &&body)
{
	/* the closure lives in the caller's frame until after the ereport below */
	static_assert(std::is_trivially_destructible_v<std::remove_reference_t<F>>,
				  "CallCpp: capture by reference; a closure that owns a C++ object leaks it on ERROR");
	char sqlstate[6] = "XX000";
	char message[512];
	char detail[512];
	bool failed = true;

	message[0] = detail[0] = '\0';
	try {
		body();
		failed = false;
	} catch (const Error &e) {
		/* no palloc or ereport inside catch: a longjmp from here would strand the exception */
		strlcpy(sqlstate, e.SqlState(), sizeof sqlstate);
		strlcpy(message, e.what(), sizeof message);
		strlcpy(detail, e.Detail().c_str(), sizeof detail);
	} catch (const std::bad_alloc &) {
		strlcpy(sqlstate, "53200", sizeof sqlstate);
		strlcpy(message, "out of memory", sizeof message);
	} catch (const std::exception &e) {
		strlcpy(message, e.what(), sizeof message);
	} catch (...) {
		strlcpy(message, "unknown C++ exception", sizeof message);
	}
	if (failed)
		ereport(ERROR, (errcode(MAKE_SQLSTATE(sqlstate[0], sqlstate[1], sqlstate[2], sqlstate[3], sqlstate[4])),
						errmsg("chat_outbox: %s", message), detail[0] ? errdetail("%s", detail) : 0));
}

} // namespace chat_outbox
