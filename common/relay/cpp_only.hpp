// common/relay/cpp_only.hpp - include last in every common/relay/*.cpp file.
//
// These files are compiled into the extension's library too, and they are plain C++ (exceptions, RAII). Postgres headers redefine printf, ERROR, foreach and
// friends, and PG errors longjmp over C++ destructors, so the two must never meet in one file.
#pragma once

#if defined(POSTGRES_H)
static_assert(false, "common/relay must not include Postgres headers");
#endif
