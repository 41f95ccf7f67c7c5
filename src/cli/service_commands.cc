// `causeway service`: services run by the server (docs/services.md).
//
//   service up FILE [--name NAME] [--port PORT]
//   service status [NAME]
//   service update NAME FILE [--mode rolling|blue_green]
//   service logs NAME [--replica JOB]
//   service down NAME
#include "cli/service_commands.h"

#include <cstdio>

#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/table.h"
#include "net/http_client.h"

namespace causeway::cli {

using nlohmann::json;

namespace {

std::string Path(const std::string& name) { return "/v1/services/" + net::UrlEncode(name); }

std::string Rate(double qps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f/s", qps);
  return buf;
}

void PrintService(const json& s) {
  std::cout << s.value("name", "") << " (team " << s.value("team", "") << ", owner " << s.value("owner", "")
            << ") revision " << s.value("revision", int64_t{1}) << ": " << s.value("state", "") << ", "
            << s.value("mode", "") << ", "
            << s.value("ready_replicas", 0) << (s.value("ready_replicas", 0) == 1 ? " replica" : " replicas")
            << " ready (target " << s.value("target_replicas", 0) << ")\n"
            << "  endpoint: " << s.value("endpoint", "") << " (proxy " << s.value("proxy", "") << ")\n"
            << "  requests: " << s.value("requests", int64_t{0}) << ", errors " << s.value("errors", int64_t{0})
            << ", now " << Rate(s.value("qps", 0.0)) << "\n";
  if (s.contains("replicas_refused")) std::cout << "  replicas refused: " << s["replicas_refused"].get<std::string>() << "\n";
  if (!s["replicas"].empty()) {
    Table t({"replica", "role", "rev", "state", "cluster", "address", "traffic", "requests", "errors", "probe"});
    for (const json& r : s["replicas"]) {
      t.Add({r.value("job", ""), r.value("role", ""), std::to_string(r.value("revision", int64_t{1})), r.value("state", ""),
             r.value("cluster", "") == "" ? "-" : r.value("cluster", ""),
             r.value("address", "") == "" ? "-" : r.value("address", ""), r.value("in_traffic", false) ? "in" : "out",
             std::to_string(r.value("requests", int64_t{0})), std::to_string(r.value("errors", int64_t{0})),
             r.value("probe", "") == "" ? "-" : r.value("probe", "")});
    }
    t.Print(std::cout);
  }
  if (s.contains("transitions")) {
    for (const json& t : s["transitions"]) {
      const std::string owner = t.value("next_action_owner", "");
      std::cout << "  " << t.value("at", "") << " " << t.value("to", "") << ": " << t.value("reason", "")
                << (owner.empty() ? "" : " (" + owner + ")") << "\n";
    }
  }
}

}  // namespace

void AddServiceCommands(Cli& c) {
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* svc = c.app.add_subcommand("service", "services: replicas behind one endpoint on HAProxy, with failover");
  svc->require_subcommand(1);

  auto* up = svc->add_subcommand("up", "bring up a service from a task file with a service: section");
  std::string& file = c.Keep<std::string>();
  std::string& up_name = c.Keep<std::string>();
  int& port = c.Keep<int>(0);
  up->add_option("FILE", file, "the task file (SkyPilot's service: section, Causeway's failover:)")->required();
  up->add_option("--name", up_name, "the service's name (default: the task's name)");
  up->add_option("--port", port, "the endpoint's port (default: a free one)");
  up->callback([&] {
    auto text = ReadFile(file);
    if (!text.ok()) {
      rc = Fail(text.status());
      return;
    }
    json body = {{"spec", *text}, {"file", file}, {"name", up_name}, {"port", port}};
    auto j = api.Call("POST", "/v1/services", body.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "service " << (*j)["name"].get<std::string>() << " is up: " << (*j)["endpoint"].get<std::string>()
              << " (replicas start now; causeway service status " << (*j)["name"].get<std::string>() << ")\n";
  });

  auto* update = svc->add_subcommand("update", "give a service a new revision of its task; its replicas are replaced while it serves");
  std::string& update_name = c.Keep<std::string>();
  std::string& update_file = c.Keep<std::string>();
  std::string& mode = c.Keep<std::string>("rolling");
  update->add_option("NAME", update_name, "the service")->required();
  update->add_option("FILE", update_file, "the task file's new revision")->required();
  // Checked by the server, which names what it accepts.
  update->add_option("--mode", mode,
                     "rolling: each old replica leaves as a new one is ready (default); blue_green: the old ones "
                     "leave once all the new ones are ready");
  update->callback([&] {
    auto text = ReadFile(update_file);
    if (!text.ok()) {
      rc = Fail(text.status());
      return;
    }
    json body = {{"spec", *text}, {"file", update_file}, {"mode", mode}};
    auto j = api.Call("PUT", Path(update_name), body.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "service " << update_name << " is at revision " << j->value("revision", int64_t{0}) << ": its "
              << j->value("update_mode", "") << " replacement of replicas begins (causeway service status "
              << update_name << ")\n";
  });

  auto* status = svc->add_subcommand("status", "every service of your teams, or one with its replicas and transitions");
  std::string& status_name = c.Keep<std::string>();
  status->add_option("NAME", status_name, "one service");
  status->callback([&] {
    auto j = api.Call("GET", status_name.empty() ? "/v1/services" : Path(status_name), "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    if (!status_name.empty()) return PrintService(*j);
    Table t({"service", "team", "mode", "ready", "endpoint", "qps", "requests", "errors"});
    for (const json& s : (*j)["services"]) {
      t.Add({s.value("name", ""), s.value("team", ""), s.value("mode", ""),
             std::to_string(s.value("ready_replicas", 0)) + "/" + std::to_string(s.value("target_replicas", 0)),
             s.value("endpoint", ""), Rate(s.value("qps", 0.0)), std::to_string(s.value("requests", int64_t{0})),
             std::to_string(s.value("errors", int64_t{0}))});
    }
    t.Print(std::cout);
  });

  auto* logs = svc->add_subcommand("logs", "a replica's output (the first ready one unless --replica)");
  std::string& logs_name = c.Keep<std::string>();
  std::string& replica = c.Keep<std::string>();
  logs->add_option("NAME", logs_name, "the service")->required();
  logs->add_option("--replica", replica, "a replica's job id");
  logs->callback([&] {
    std::string job = replica;
    if (job.empty()) {
      auto j = api.Call("GET", Path(logs_name), "", rc);
      if (!j) return;
      for (const json& r : (*j)["replicas"]) {
        if (job.empty() || r.value("state", "") == "ready") job = r.value("job", "");
        if (r.value("state", "") == "ready") break;
      }
      if (job.empty()) {
        rc = Fail(NotFound("service " + logs_name + " has no replica yet"));
        return;
      }
    }
    auto res = api.Raw("GET", "/v1/jobs/" + net::UrlEncode(job) + "/logs", "", rc);
    if (res) std::cout << res->body << std::flush;
  });

  auto* down = svc->add_subcommand("down", "take a service down: its replicas end, its endpoint closes");
  std::string& down_name = c.Keep<std::string>();
  down->add_option("NAME", down_name, "the service")->required();
  down->callback([&] {
    auto j = api.Call("DELETE", Path(down_name), "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "service " << down_name << " is going down: its replicas end, then its endpoint closes\n";
  });
}

}  // namespace causeway::cli
