// common/process/prometheus_text.cpp - see prometheus_text.hpp.
#include "common/process/prometheus_text.hpp"

#include <cstdio>

namespace chat_outbox {

namespace {

std::string
Num(double v)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.17g", v);
	return buf;
}

} // namespace

void
MetricSample(std::string *out, std::string_view name, std::string_view help, std::string_view type, double v)
{
	MetricHeader(out, name, help, type);
	*out += std::string(name) + " " + Num(v) + "\n";
}

std::string
MetricLabelValue(const std::string &v)
{
	std::string out;
	for (char c : v) {
		if (c == '\\' || c == '"')
			out.push_back('\\');
		if (c == '\n') {
			out += "\\n";
			continue;
		}
		out.push_back(c);
	}
	return out;
}

void
MetricLine(std::string *out, std::string_view name, const std::vector<MetricLabel> &labels, double v)
{
	*out += name;
	if (!labels.empty()) {
		*out += '{';
		for (size_t i = 0; i < labels.size(); i++) {
			if (i > 0)
				*out += ',';
			*out += labels[i].first;
			*out += "=\"";
			*out += MetricLabelValue(labels[i].second);
			*out += '"';
		}
		*out += '}';
	}
	*out += ' ';
	*out += Num(v);
	*out += '\n';
}

void
MetricHeader(std::string *out, std::string_view name, std::string_view help, std::string_view type)
{
	*out += "# HELP ";
	*out += name;
	*out += ' ';
	*out += help;
	*out += "\n# TYPE ";
	*out += name;
	*out += ' ';
	*out += type;
	*out += '\n';
}

void
Histogram::Observe(double v)
{
	size_t i = 0;
	while (i < bounds_.size() && v > bounds_[i])
		i++;
	counts_[i]++;
	sum_ += v;
	count_++;
}

void
Histogram::Render(const std::string &name, const std::string &help, std::string *out) const
{
	MetricHeader(out, name, help, "histogram");
	uint64_t cumulative = 0;
	for (size_t i = 0; i < bounds_.size(); i++) {
		cumulative += counts_[i];
		*out += name + "_bucket{le=\"" + Num(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
	}
	*out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
	*out += name + "_sum " + Num(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

} // namespace chat_outbox
