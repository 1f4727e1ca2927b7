// daemon/src/gateway/http/core/web_files.hpp - which file under --web-root a GET names, and how it is typed.
// Pure: gateway/http_routes.cpp does the file system part.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace chat_outboxd::web {

// Largest file served. The web client's files are a few tens of KB; a larger file under the root is
// a mistake (or someone else's file) and is refused rather than read into memory on the event loop.
constexpr size_t kMaxFileBytes = 1024 * 1024;

// RelativePath maps a request path to a path relative to the web root: "/" and "/dir/" name
// "index.html" in that folder, "/app.js" names "app.js". It returns "" (refused) unless every segment
// is a plain name: no "..", ".", empty ("//") or dot-file segment, no backslash, NUL or control
// character, at most 255 bytes in all. So a request can only name a visible file inside the root.
std::string RelativePath(std::string_view url_path);

// ContentType by file extension, or nullptr for a type the client does not use (not served, so no
// file is ever sent with a guessed type).
const char *ContentType(std::string_view relative_path);

} // namespace chat_outboxd::web
