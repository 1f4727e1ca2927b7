/*
 * extension/src/pg/cpp_boundary.hpp - the one crossing from Postgres code into core C++.
 *
 * Two rules meet here. A C++ exception must never unwind into Postgres' C frames (no unwind
 * info: std::terminate, then a cluster restart), and ereport(ERROR) must never longjmp over a
 * frame that owns a C++ object (its destructor is skipped, so what it owns leaks on every
 * error). See docs/extension.md, 'C++ inside Postgres'. So CallCpp runs core code inside try,
 * copies any failure into fixed buffers, lets every C++ object die with the try block, and only
 * then ereports, keeping the SQLSTATE core chose.
 * The body must not call Postgres functions that can ereport: common/ never includes postgres.h.
 */
#pragma once

#include "pg/pg.hpp"

#include <exception>

#include "common/relay/error.hpp"

namespace chat_outbox {

template <typename F>
void
CallCpp(F &&body)
{
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
