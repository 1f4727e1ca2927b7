# Makefile - builds and installs the chat_outbox PostgreSQL extension with PGXS.
#   make && make install          (install as root)
#   tests: tests/regress/run.sh (pg_regress + isolation), or ctest -R extension
EXTENSION  = chat_outbox
MODULE_big = chat_outbox
# The SQL is built by sql/managed/generate.py, never committed: the current version's from sql/parts/,
# the released updates from sql/released/. The base, 1.0, is committed as released; Postgres installs an
# older version as the base and the updates after it.
BUILT_SQL  := $(shell python3 sql/managed/generate.py --list)
DATA       = $(sort $(wildcard sql/released/chat_outbox--*.sql) $(filter sql/chat_outbox--%,$(BUILT_SQL)))
EXTRA_CLEAN = $(BUILT_SQL)

# common/ by who links it: its top folder and bullmq/ go into every build, relay/ into both relays;
# process/ is for the processes only (CMake), never this library.
SRCS = $(wildcard extension/src/pg/*.cpp common/*.cpp common/bullmq/*.cpp common/relay/*.cpp)
OBJS = $(SRCS:.cpp=.o)

# Include paths: the sources include "pg/..." (extension/src) and "common/..." (the repository root,
# which PGXS itself puts on the path, as -I. -I$(srcdir): the build runs in this folder), and the
# server's headers, which PGXS adds too.
PG_CPPFLAGS = -Iextension/src
PG_CXXFLAGS = -std=c++17 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-register -Wno-format-truncation
# PGXS adds COPT (extra flags from the environment or the command line) to C only; the C++ sources take
# them too, last, so they win (pg_buildext sets COPT to dpkg-buildflags' CFLAGS: a package build's flags).
# C-only flags among them (Debian 13's dpkg-buildflags add -Werror=implicit-function-declaration to CFLAGS)
# are left out: g++ warns on each that it is not valid for C++.
PG_CXXFLAGS += $(filter-out -Werror=implicit-function-declaration,$(COPT))
# PGXS links the .so with gcc, which does not pull in the C++ runtime by itself.
SHLIB_LINK = -lhiredis -lssl -lcrypto -lstdc++

# Debian's PG 15 is built --with-llvm: PGXS would also compile every .cpp to bitcode with clang,
# without PG_CXXFLAGS (so not as C++17), and fail. A plain assignment is overridden by Makefile.global.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Small project: any header change rebuilds every object.
$(OBJS): $(wildcard extension/src/*/*.hpp common/*.hpp common/*/*.hpp)

# Every file the generator writes, from one run of it (a grouped target: make runs the recipe once).
all: $(BUILT_SQL)
$(BUILT_SQL) &: sql/managed/generate.py $(wildcard sql/parts/*.sql sql/parts/*/*.sql sql/released/update_*.sql)
	python3 sql/managed/generate.py

# The Lua scripts the .so sends (common/bullmq/lua/, common/relay/lua/), each folder embedded by
# scripts/embed_lua.py as the header <folder>/scripts.hpp beside its scripts (built, git-ignored;
# CMake writes its own into its build tree: chat_outbox_embed_lua in CMakeLists.txt). The sources
# include it from the repository root, which PGXS puts on the path.
LUA_HEADERS = common/bullmq/lua/scripts.hpp common/relay/lua/scripts.hpp
common/bullmq/lua/scripts.hpp: LUA_NAMESPACE = chat_outbox::bullmq::lua
common/relay/lua/scripts.hpp: LUA_NAMESPACE = chat_outbox::relay_lua
$(foreach h,$(LUA_HEADERS),$(eval $(h): scripts/embed_lua.py $(wildcard $(dir $(h))*.lua)))
$(LUA_HEADERS):
	python3 scripts/embed_lua.py $@ $(LUA_NAMESPACE) $(filter %.lua,$^)
$(OBJS): $(LUA_HEADERS)
EXTRA_CLEAN += $(LUA_HEADERS)

# What `make install` puts in the server's folders, by name: the control file and DATA in
# $(sharedir)/extension, the library in $(pkglibdir) (tests/extension/installed_files.sh compares it with
# what is there). `make install` first removes every chat_outbox file an earlier build left there (an
# update script this tree no longer ships, such as a managed path of an older version), so that what the
# server finds is this build's and nothing else; the removal is a prerequisite of both of PGXS's install
# recipes (the library's, install-lib-shared, and the SQL's), so it runs before either, with -j too.
installed-names:
	@echo $(EXTENSION).control $(notdir $(DATA)) $(MODULE_big)$(DLSUFFIX)
remove-installed:
	rm -f '$(DESTDIR)$(datadir)/extension/$(EXTENSION)'.control '$(DESTDIR)$(datadir)/extension/$(EXTENSION)'--*.sql \
		'$(DESTDIR)$(pkglibdir)/$(MODULE_big)$(DLSUFFIX)'
install install-lib-shared: remove-installed
.PHONY: installed-names remove-installed
