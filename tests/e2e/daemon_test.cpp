// The real phalanxd as a child process: it starts on an empty data directory, answers /readyz and
// /healthz, stops cleanly on SIGTERM, and keeps what it acknowledged across a restart.

#include "loadtest/phalanxd_process.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace phalanx::loadtest {
namespace {

namespace fs = std::filesystem;

struct scratch_dir {
  scratch_dir() {
    auto base = fs::temp_directory_path() / "phalanx-e2e-XXXXXX";
    std::string tmpl = base.string();
    path = ::mkdtemp(tmpl.data());
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string path;
};

api::client_request get(std::string target) {
  api::client_request r;
  r.target = std::move(target);
  return r;
}

TEST(Daemon, StartsAnswersAndStopsCleanlyOnSigterm) {
  scratch_dir dir;
  phalanxd_options o;
  o.data_dir = dir.path + "/data";
  auto d = phalanxd_process::start(o);
  ASSERT_TRUE(d.ok()) << d.error().message();
  api::http_client c((*d)->client_options());
  for (const char* path : {"/readyz", "/healthz"}) {
    auto res = c.send(get(path));
    ASSERT_TRUE(res.ok()) << res.error().message();
    EXPECT_EQ(res->status, 200) << path;
  }
  auto code = (*d)->stop();
  ASSERT_TRUE(code.ok()) << code.error().message();
  EXPECT_EQ(*code, 0) << (*d)->log_tail();
}

TEST(Daemon, KeepsAnAcknowledgedQueueAcrossSigkill) {
  scratch_dir dir;
  phalanxd_options o;
  o.data_dir = dir.path + "/data";
  auto d = phalanxd_process::start(o);
  ASSERT_TRUE(d.ok()) << d.error().message();
  {
    api::http_client c((*d)->client_options());
    api::client_request create;
    create.method = "POST";
    create.target = "/apis/scheduling.volcano.sh/v1beta1/queues";
    create.content_type = "application/yaml";
    create.body = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                  "metadata: {name: research}\nspec: {weight: 3}\n";
    auto res = c.send(create);
    ASSERT_TRUE(res.ok()) << res.error().message();
    ASSERT_EQ(res->status, 201) << res->body;
  }
  (*d)->kill();
  auto again = phalanxd_process::start(o);
  ASSERT_TRUE(again.ok()) << again.error().message();
  api::http_client c((*again)->client_options());
  auto res = c.send(get("/apis/scheduling.volcano.sh/v1beta1/queues/research"));
  ASSERT_TRUE(res.ok()) << res.error().message();
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_NE(res->body.find("\"weight\":3"), std::string::npos) << res->body;
}

TEST(Daemon, StartFailsWithTheDaemonsOwnMessage) {
  scratch_dir dir;
  std::ofstream(dir.path + "/cluster.yaml") << "nodes: 3\n";
  phalanxd_options o;
  o.data_dir = dir.path + "/data";
  o.cluster_file = dir.path + "/cluster.yaml";
  auto d = phalanxd_process::start(o);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message().find("exited with code 1"), std::string::npos)
      << d.error().message();
  EXPECT_NE(d.error().message().find("cluster.yaml"), std::string::npos) << d.error().message();
}

} // namespace
} // namespace phalanx::loadtest
