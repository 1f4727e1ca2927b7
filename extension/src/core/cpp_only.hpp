// extension/src/core/cpp_only.hpp - include last in every core/*.cpp file.
//
// Core code is plain C++ (exceptions, RAII). Postgres headers redefine printf, ERROR, foreach and
// friends, and PG errors longjmp over C++ destructors, so the two must never meet in one file.
#pragma once

#if defined(POSTGRES_H)
static_assert(false, "extension/src/core must not include Postgres headers");
#endif
