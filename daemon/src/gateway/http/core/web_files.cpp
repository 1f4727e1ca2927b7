// daemon/src/gateway/http/core/web_files.cpp - request path -> file under the web root (see web_files.hpp).
#include "gateway/http/core/web_files.hpp"

namespace chat_outboxd::web {

std::string
RelativePath(std::string_view url_path)
{
	constexpr size_t kMaxPath = 255;
	if (url_path.empty() || url_path.front() != '/' || url_path.size() > kMaxPath)
		return "";
	std::string rel(url_path.substr(1));
	if (rel.empty() || rel.back() == '/')
		rel += "index.html";
	size_t start = 0;
	while (start <= rel.size()) {
		size_t end = rel.find('/', start);
		if (end == std::string::npos)
			end = rel.size();
		std::string_view seg(rel.data() + start, end - start);
		// Empty, ".", ".." and dot-files all start with '.' or are empty.
		if (seg.empty() || seg.front() == '.')
			return "";
		for (char ch : seg) {
			auto u = static_cast<unsigned char>(ch);
			if (u < 0x20 || u == 0x7f || ch == '\\')
				return "";
		}
		start = end + 1;
	}
	return rel;
}

const char *
ContentType(std::string_view relative_path)
{
	static const struct {
		std::string_view ext;
		const char *type;
	} kTypes[] = {
	    {".html", "text/html; charset=UTF-8"},
	    {".js", "text/javascript; charset=UTF-8"},
	    {".css", "text/css; charset=UTF-8"},
	    {".json", "application/json"},
	    {".map", "application/json"},
	    {".svg", "image/svg+xml"},
	    {".png", "image/png"},
	    {".ico", "image/x-icon"},
	    {".txt", "text/plain; charset=UTF-8"},
	};
	for (const auto &t : kTypes)
		if (relative_path.size() > t.ext.size() &&
		    relative_path.compare(relative_path.size() - t.ext.size(), t.ext.size(), t.ext) == 0)
			return t.type;
	return nullptr;
}

} // namespace chat_outboxd::web
