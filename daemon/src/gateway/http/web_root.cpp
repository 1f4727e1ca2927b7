// daemon/src/gateway/http/web_root.cpp - see web_root.hpp.
#include "gateway/http/web_root.hpp"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gateway/http/core/web_files.hpp"

namespace chat_outboxd {

WebFile
ReadWebFile(const std::string &root, const std::string &rel, std::string *body)
{
	char root_real[PATH_MAX], file_real[PATH_MAX];
	if (!realpath(root.c_str(), root_real) || !realpath((root + "/" + rel).c_str(), file_real))
		return WebFile::Missing;
	std::string inside = std::string(root_real) == "/" ? "/" : std::string(root_real) + "/";
	if (std::strncmp(file_real, inside.c_str(), inside.size()) != 0)
		return WebFile::Missing;
	int fd = open(file_real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return WebFile::Missing;
	struct stat st {};
	WebFile result = WebFile::Ok;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		result = WebFile::Missing;
	else if (static_cast<uint64_t>(st.st_size) > web::kMaxFileBytes)
		result = WebFile::TooLarge;
	body->clear();
	char buf[16384];
	while (result == WebFile::Ok) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			result = WebFile::Missing;
		if (n <= 0)
			break;
		body->append(buf, static_cast<size_t>(n));
		if (body->size() > web::kMaxFileBytes) // grew while we read it
			result = WebFile::TooLarge;
	}
	close(fd);
	return result;
}

} // namespace chat_outboxd
