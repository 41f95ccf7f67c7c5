#include "providers/slurm/slurm_settings.h"

#include <algorithm>
#include <memory>

namespace causeway::slurm {
namespace {

std::shared_ptr<const KindSettings> Parse(SettingsReader& r) {
  if (!r.CheckKeys({"interfaces", "url", "user", "token_file", "token_command", "conf", "accounting", "partition",
                    "gres_type", "output_dir"})) {
    return nullptr;
  }
  auto s = std::make_shared<SlurmSettings>();
  if (auto list = r.Strings("interfaces", "[rest, cli], in order of preference")) {
    s->interfaces.clear();
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string& v = (*list)[i];
      if (v != "rest" && v != "cli") {
        r.ItemError("interfaces", i, "unknown interface \"" + v + "\": expected rest or cli");
      } else if (std::find(s->interfaces.begin(), s->interfaces.end(), v) != s->interfaces.end()) {
        r.ItemError("interfaces", i, "\"" + v + "\" is listed twice");
      } else {
        s->interfaces.push_back(v);
      }
    }
  }
  const bool rest = std::find(s->interfaces.begin(), s->interfaces.end(), "rest") != s->interfaces.end();
  s->url = r.String("url", rest);
  s->user = r.String("user", rest);
  s->token_file = r.String("token_file", false);
  s->token_command = r.String("token_command", false);
  s->conf = r.String("conf", false);
  s->partition = r.String("partition", true);
  s->gres_type = r.String("gres_type", false);
  s->output_dir = r.String("output_dir", true);
  s->accounting = r.Bool("accounting").value_or(false);
  if (!s->url.empty() && s->url.rfind("http://", 0) != 0) {
    r.Error("url", "expected the slurmrestd address as http://HOST:PORT");
  }
  if (rest && s->token_file.empty() == s->token_command.empty()) {
    r.Error(s->token_file.empty() ? "token_file" : "token_command",
            "the REST interface needs exactly one of token_file and token_command");
  }
  return s;
}

}  // namespace

EstateKind EstateKindOf() {
  EstateKind k;
  k.name = "slurm";
  k.cluster_key = "slurm";
  k.parse_cluster = Parse;
  k.honours.git_workdir = k.honours.storage_paths = k.honours.node_requests = k.honours.buckets = true;
  k.honours.backend = "Slurm";
  k.cluster_block_required =
      "a cluster of a slurm provider needs slurm: {url, user, token_file, partition, output_dir} "
      "(or interfaces: [cli] without url, user and token)";
  return k;
}

}  // namespace causeway::slurm
