// daemon/src/gateway/http/web_root.hpp - reading the web client's files from --web-root (which names are
// served, and as what type, is core/web_files.hpp).
#pragma once

#include <string>

namespace chat_outboxd {

enum class WebFile { Ok,
	                 Missing,
	                 TooLarge };

// ReadWebFile reads <root>/<rel> when, with every symlink resolved, it is a regular file inside root
// of at most web::kMaxFileBytes. The files are small and local, so they are read on the loop.
WebFile ReadWebFile(const std::string &root, const std::string &rel, std::string *body);

} // namespace chat_outboxd
