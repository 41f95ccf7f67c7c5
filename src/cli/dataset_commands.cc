// `causeway dataset`: the dataset registry (docs/datasets.md).
//
//   dataset list
//   dataset register NAME --from s3://bucket/prefix|LOCATION:path [--version V] [--hash md5]
//   dataset register NAME --manifest FILE [--version V]
//   dataset versions NAME
//   dataset show NAME@VERSION
//   dataset manifest NAME@VERSION
//   dataset verify NAME@VERSION --at LOCATION
//   dataset replicate NAME@VERSION --to LOCATION|PROVIDER/REGION [--bwlimit 10M] [--attempts 3] [--no-wait]
#include "cli/dataset_commands.h"

#include <chrono>
#include <thread>

#include "causeway/job_spec.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/table.h"
#include "net/http_client.h"

namespace causeway::cli {

using nlohmann::json;

namespace {

std::string Bytes(int64_t b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string Short(const std::string& digest) { return digest.size() > 19 ? digest.substr(0, 19) + "…" : digest; }

std::string Path(const std::string& ref) { return "/v1/datasets/" + net::UrlEncode(ref); }

void PrintReplication(const json& r) {
  std::cout << r.value("dataset", "") << "@" << r.value("version", "") << " to " << r.value("to", "") << " from "
            << r.value("from", "") << ": " << r.value("state", "") << ", " << Bytes(r.value("bytes_moved", int64_t{0}))
            << " moved in " << r.value("runs", 0) << " run(s)";
  if (!r["transfer_cost"].is_null()) std::cout << ", transfer " << r["transfer_cost"].get<std::string>();
  std::cout << "\n";
  for (const json& e : r["errors"]) std::cout << "  retried after: " << e.get<std::string>() << "\n";
  if (!r.value("detail", "").empty()) std::cout << "  " << r.value("detail", "") << "\n";
}

}  // namespace

void AddDatasetCommands(Cli& c) {
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* ds = c.app.add_subcommand("dataset", "dataset versions, their verified replicas, and replication with rclone");
  ds->require_subcommand(1);

  auto* list = ds->add_subcommand("list", "every dataset the estate declares, with its latest version");
  list->callback([&] {
    auto j = api.Call("GET", "/v1/datasets", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    Table t({"dataset", "owner", "residency", "versions", "latest", "objects", "size", "verified at"});
    for (const json& d : (*j)["datasets"]) {
      const json& l = d["latest"];
      std::string at;
      for (const json& p : d["verified_at"]) at += (at.empty() ? "" : ", ") + p.get<std::string>();
      t.Add({d["name"], d.value("owner", "") == "" ? "-" : d.value("owner", ""),
             d.value("residency", "") == "" ? "-" : d.value("residency", ""), std::to_string(d.value("versions", 0)),
             l.is_null() ? "-" : l.value("version", ""), l.is_null() ? "-" : std::to_string(l.value("objects", 0)),
             l.is_null() ? "-" : Bytes(l.value("bytes", int64_t{0})), at.empty() ? "-" : at});
    }
    t.Print(std::cout);
  });

  auto* reg = ds->add_subcommand("register", "register a version: the manifest of what is stored, named by its digest");
  std::string& name = c.Keep<std::string>();
  std::string& from = c.Keep<std::string>();
  std::string& version = c.Keep<std::string>();
  std::string& manifest = c.Keep<std::string>();
  std::string& hash = c.Keep<std::string>("md5");
  reg->add_option("name", name, "a dataset the estate declares")->required();
  reg->add_option("--from", from, "where the objects are: s3://bucket/prefix (a location's url) or LOCATION:path");
  reg->add_option("--version", version, "the version's label (default: v<N>)");
  reg->add_option("--manifest", manifest, "a manifest file in Causeway's form instead of a listing");
  reg->add_option("--hash", hash, "the content hash a listing reads: md5 (S3's), sha1 or sha256");
  reg->callback([&] {
    json body = {{"name", name}, {"version", version}, {"hash", hash}};
    if (!manifest.empty()) {
      auto text = ReadFile(manifest);
      if (!text.ok()) {
        rc = Fail(text.status());
        return;
      }
      body["manifest"] = *text;
    } else {
      body["from"] = from;
    }
    auto j = api.Call("POST", "/v1/datasets", body.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "registered " << (*j)["dataset"].get<std::string>() << "@" << (*j)["version"].get<std::string>()
              << " " << (*j)["digest"].get<std::string>() << ": " << (*j)["objects"].get<int64_t>() << " objects, "
              << Bytes((*j)["bytes"].get<int64_t>()) << "\n";
  });

  auto* versions = ds->add_subcommand("versions", "the versions of a dataset, oldest first");
  std::string& vname = c.Keep<std::string>();
  versions->add_option("name", vname, "the dataset")->required();
  versions->callback([&] {
    auto j = api.Call("GET", Path(vname) + "/versions", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    Table t({"version", "digest", "objects", "size", "verified replicas", "registered", "by"});
    for (const json& v : (*j)["versions"]) {
      t.Add({v["version"], Short(v["digest"]), std::to_string(v.value("objects", 0)),
             Bytes(v.value("bytes", int64_t{0})), std::to_string(v.value("verified_replicas", 0)), v["registered_at"],
             v["registered_by"]});
    }
    t.Print(std::cout);
  });

  auto* show = ds->add_subcommand("show", "a version and its replicas (only verified ones count)");
  std::string& sref = c.Keep<std::string>();
  show->add_option("ref", sref, "NAME@VERSION, NAME@sha256:…, or NAME for the latest")->required();
  show->callback([&] {
    auto j = api.Call("GET", Path(sref), "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << (*j)["dataset"].get<std::string>() << "@" << (*j)["version"].get<std::string>() << "\n"
              << "digest:   " << (*j)["digest"].get<std::string>() << "\n"
              << "objects:  " << (*j)["objects"].get<int64_t>() << " (" << Bytes((*j)["bytes"].get<int64_t>())
              << ", " << (*j)["hash"].get<std::string>() << ")\n"
              << "source:   " << (*j)["source"].get<std::string>() << "\n";
    Table t({"location", "place", "zone", "state", "verified", "moved", "storage/month", "detail"});
    for (const json& r : (*j)["replicas"]) {
      t.Add({r["location"], r.value("place", "-"), r.value("zone", "-"), r["state"],
             r["verified_at"].is_null() ? "-" : r["verified_at"].get<std::string>(),
             Bytes(r.value("bytes_moved", int64_t{0})), r.value("storage_per_month", "-"), r.value("detail", "")});
    }
    t.Print(std::cout);
  });

  auto* man = ds->add_subcommand("manifest", "a version's manifest (its digest is the SHA-256 of this text)");
  std::string& mref = c.Keep<std::string>();
  man->add_option("ref", mref, "NAME@VERSION")->required();
  man->callback([&] {
    auto res = api.Raw("GET", Path(mref) + "/manifest", "", rc);
    if (res) std::cout << res->body;
  });

  auto* verify = ds->add_subcommand("verify", "list a replica and check every object against the manifest");
  std::string& vref = c.Keep<std::string>();
  std::string& at = c.Keep<std::string>();
  verify->add_option("ref", vref, "NAME@VERSION")->required();
  verify->add_option("--at", at, "the replica's storage location (or PROVIDER/REGION)")->required();
  verify->callback([&] {
    auto j = api.Call("POST", Path(vref) + "/verify", json{{"location", at}}.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << vref << " at " << (*j)["location"].get<std::string>() << ": " << (*j)["state"].get<std::string>();
    if (!(*j)["detail"].get<std::string>().empty()) std::cout << " — " << (*j)["detail"].get<std::string>();
    std::cout << "\n";
    if ((*j)["state"] != "verified") rc = kExitFailure;
  });

  auto* rep = ds->add_subcommand("replicate", "copy a version to a location with rclone (what is missing moves)");
  std::string& rref = c.Keep<std::string>();
  std::string& to = c.Keep<std::string>();
  std::string& bwlimit = c.Keep<std::string>();
  int& attempts = c.Keep<int>(3);
  bool& no_wait = c.Keep<bool>(false);
  rep->add_option("ref", rref, "NAME@VERSION")->required();
  rep->add_option("--to", to, "a storage location, or PROVIDER/REGION when one location is there")->required();
  rep->add_option("--bwlimit", bwlimit, "rclone's bandwidth limit, e.g. 10M (bytes a second)");
  rep->add_option("--attempts", attempts, "runs of rclone before giving up (1-10; backoff doubles)");
  rep->add_flag("--no-wait", no_wait, "start it and print its id");
  rep->callback([&] {
    json body = {{"to", to}, {"attempts", attempts}};
    if (!bwlimit.empty()) body["bwlimit"] = bwlimit;
    auto j = api.Call("POST", Path(rref) + "/replicate", body.dump(), rc);
    if (!j) return;
    if (no_wait) {
      if (g.json_output) return PrintJson(*j);
      std::cout << (*j)["id"].get<std::string>() << "\n";
      return;
    }
    std::string id = (*j)["id"];
    json last = *j;
    bool shown = false;  // a progress line is on the terminal
    while (last.value("state", "") == "running") {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      auto next = api.Call("GET", "/v1/replications/" + net::UrlEncode(id), "", rc);
      if (!next) return;
      last = *next;
      const json& p = last["progress"];
      if (!g.json_output && last.value("state", "") == "running") {
        shown = true;
        std::cerr << "\r" << Bytes(p.value("bytes", int64_t{0})) << " / " << Bytes(p.value("total_bytes", int64_t{0}))
                  << ", " << p.value("transfers", 0) << "/" << p.value("total_transfers", 0) << " objects, "
                  << Bytes(static_cast<int64_t>(p.value("speed", 0.0))) << "/s (run " << p.value("run", 1) << ")   "
                  << std::flush;
      }
    }
    if (shown) std::cerr << "\n";
    if (g.json_output) {
      PrintJson(last);
    } else {
      PrintReplication(last);
    }
    if (last.value("state", "") != "verified") rc = kExitFailure;
  });
}

}  // namespace causeway::cli
