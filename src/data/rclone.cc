#include "data/rclone.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "causeway/subprocess.h"

namespace causeway::data {

std::string RcloneHashName(const std::string& hash_type) {
  if (hash_type == "md5") return "MD5";
  if (hash_type == "sha1") return "SHA-1";
  if (hash_type == "sha256") return "SHA-256";
  return "";
}

std::optional<std::vector<std::string>> SplitCsvRecord(std::string_view record) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < record.size(); ++i) {
    char c = record[i];
    if (quoted) {
      if (c == '"' && i + 1 < record.size() && record[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) return std::nullopt;
  return fields;
}

std::map<std::string, std::string> Rclone::Environment() const {
  std::map<std::string, std::string> env{{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                         {"HOME", s_.home.empty() ? "/tmp" : s_.home}};
  if (!s_.config.empty()) env["RCLONE_CONFIG"] = s_.config;
  return env;
}

std::vector<std::string> Rclone::Base() const {
  std::vector<std::string> argv{s_.binary};
  if (!s_.config.empty()) argv.insert(argv.end(), {"--config", s_.config});
  return argv;
}

Result<Manifest> Rclone::List(const std::string& remote, const std::string& hash_type, const ManifestLimits& limits,
                              const std::atomic<bool>* stop) const {
  std::string hash_name = RcloneHashName(hash_type);
  if (hash_name.empty()) return InvalidArgument("unknown hash type \"" + hash_type + "\" (md5, sha1, sha256)");
  std::vector<std::string> argv = Base();
  argv.insert(argv.end(), {"lsf", "-R", "--files-only", "--csv", "--format", "psh", "--hash", hash_name, remote});
  ManifestBuilder builder(hash_type, limits);
  Status problem = Status::Ok();
  std::string pending, err_tail;
  size_t record_no = 0;
  ProcessStreams streams;
  streams.stop = stop;
  streams.on_out = [&](std::string_view line) {
    if (!pending.empty()) pending += '\n';
    pending += line;
    if (pending.size() > limits.max_path * 4 + 200) {
      problem = InvalidArgument("rclone listed a record longer than any path may be");
      return false;
    }
    auto fields = SplitCsvRecord(pending);
    if (!fields) return true;  // a quoted newline: the record goes on
    ++record_no;
    std::string where = "object " + std::to_string(record_no) + " of " + remote;
    pending.clear();
    if (fields->size() != 3) {
      problem = InvalidArgument(where + ": rclone listed " + std::to_string(fields->size()) + " fields, not 3");
      return false;
    }
    int64_t size = 0;
    const std::string& st = (*fields)[1];
    auto r = std::from_chars(st.data(), st.data() + st.size(), size);
    if (r.ec != std::errc() || r.ptr != st.data() + st.size()) {
      problem = InvalidArgument(where + ": a size that is not a number");
      return false;
    }
    problem = builder.Add(std::move((*fields)[0]), size, std::move((*fields)[2]), where);
    return problem.ok();
  };
  streams.on_err = [&](std::string_view line) {
    if (err_tail.size() < 4096) err_tail += std::string(line.substr(0, 1024)) + "\n";
    return true;
  };
  auto rc = RunProcessStreaming(argv, Environment(), s_.timeout, streams);
  if (!problem.ok()) return problem;
  if (!rc.ok()) return rc.status();
  if (*rc != 0) {
    return Unavailable("rclone could not list " + remote + " (exit " + std::to_string(*rc) + "): " + err_tail);
  }
  return std::move(builder).Finish();
}

Result<Rclone::Size> Rclone::Count(const std::string& remote, std::chrono::milliseconds timeout) const {
  std::vector<std::string> argv = Base();
  argv.insert(argv.end(), {"size", "--json", remote});
  ASSIGN_OR_RETURN(ProcessResult r, RunProcess(argv, Environment(), "", std::min(timeout, s_.timeout)));
  // rclone's exit codes 3 and 4: the directory or the object is not there.
  if (r.exit_code == 3 || r.exit_code == 4) return Size{};
  if (r.exit_code != 0) {
    return Unavailable("rclone could not count " + remote + " (exit " + std::to_string(r.exit_code) +
                       "): " + r.err.substr(0, 1024));
  }
  // rclone's answer: anything but the expected object is reported below with what rclone printed.
  auto j = nlohmann::json::parse(r.out.substr(0, 4096), nullptr, false);
  auto count = j.is_object() ? j.find("count") : j.end();
  auto bytes = j.is_object() ? j.find("bytes") : j.end();
  if (!j.is_object() || count == j.end() || bytes == j.end() || !count->is_number_integer() ||
      !bytes->is_number_integer()) {
    return Unavailable("rclone's size of " + remote + " was not {\"count\": N, \"bytes\": N}");
  }
  return Size{count->get<int64_t>(), bytes->get<int64_t>()};
}

Result<CopyResult> Rclone::Copy(const std::string& from, const std::string& to, const CopyOptions& options,
                                CopyResult* partial) const {
  CopyResult total;
  auto backoff = options.backoff;
  for (int run = 1; run <= std::max(1, options.attempts); ++run) {
    std::vector<std::string> argv = Base();
    argv.insert(argv.end(), {"copy", from, to, "--checksum", "--use-json-log", "-v", "--stats", "1s",
                             "--retries", "1", "--low-level-retries", "3"});
    if (!options.bwlimit.empty()) argv.insert(argv.end(), {"--bwlimit", options.bwlimit});
    if (!options.copy_dest.empty()) argv.insert(argv.end(), {"--copy-dest", options.copy_dest});
    CopyProgress last;
    int64_t server_side = 0;
    last.run = run;
    std::string error;
    ProcessStreams streams;
    streams.stop = options.stop;
    streams.max_line = 64 * 1024;
    streams.on_out = [](std::string_view) { return true; };
    streams.on_err = [&](std::string_view line) {
      // rclone's log lines are JSON (--use-json-log); one that is not is kept as text for the
      // error.
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object()) {
        if (error.size() < 2048) error += std::string(line.substr(0, 512)) + " ";
        return true;
      }
      // A field as text; "" when absent or not a string (never a throw).
      auto text = [&j](const char* key) {
        auto f = j.find(key);
        return f != j.end() && f->is_string() ? f->get<std::string>() : std::string();
      };
      if (text("msg") == "Copied (server-side copy)" && options.object_size && !text("object").empty()) {
        server_side += options.object_size(text("object"));
      }
      if (text("level") == "error" && error.size() < 2048) {
        error += text("msg") + (text("object").empty() ? "" : " (" + text("object") + ")") + "; ";
      }
      auto it = j.find("stats");
      if (it != j.end() && it->is_object()) {
        const auto& s = *it;
        auto num = [&](const char* k) { return s.contains(k) && s[k].is_number() ? s[k].get<int64_t>() : 0; };
        last.bytes = num("bytes");
        last.total_bytes = num("totalBytes");
        last.transfers = num("transfers");
        last.total_transfers = num("totalTransfers");
        last.checks = num("checks");
        last.errors = num("errors");
        last.speed = s.contains("speed") && s["speed"].is_number() ? s["speed"].get<double>() : 0;
        if (options.progress) options.progress(last);
      }
      return true;
    };
    auto rc = RunProcessStreaming(argv, Environment(), s_.timeout, streams);
    total.runs = run;
    total.bytes_moved += std::max<int64_t>(0, last.bytes - server_side);
    total.server_side_bytes += server_side;
    total.transfers += last.transfers;
    total.checks += last.checks;
    if (rc.ok() && *rc == 0) return total;
    std::string why = !rc.ok() ? rc.status().message()
                               : "rclone exited " + std::to_string(*rc) + (error.empty() ? "" : ": " + error);
    total.errors.push_back(why);
    if (partial) *partial = total;
    if (!rc.ok() && rc.status().code() == Code::kUnavailable) return rc.status();  // stopped: no retry
    if (rc.ok() && *rc == 127) return FailedPrecondition(why);
    if (run < options.attempts) {
      if (options.retrying) options.retrying(run, why);
      auto until = std::chrono::steady_clock::now() + backoff;
      while (std::chrono::steady_clock::now() < until) {
        if (options.stop && options.stop->load()) return Unavailable("stopped");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      backoff *= 2;
    }
  }
  if (partial) *partial = total;
  return Unavailable("copying " + from + " to " + to + " failed " + std::to_string(total.runs) +
                     " time(s); last: " + total.errors.back());
}

}  // namespace causeway::data
