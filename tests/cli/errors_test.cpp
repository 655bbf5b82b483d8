// What phalanxctl says when things go wrong, and its exit codes: 2 for a bad command line or file
// (nothing sent), 1 for what the server refused (its Status message, naming the field and rule),
// 3 when the server cannot be reached. Also apply's honest answers for objects that exist, and
// the connection flags: --token / PHALANX_TOKEN, PHALANX_SERVER, TLS.

#include "tests/cli/harness.hpp"

#include "api/testing/tls_files.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>


#include <cstdio>

namespace phalanx::cli_test {
namespace {

namespace json = boost::json;

std::string queue_yaml(const std::string& name, int weight) {
  return "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: " + name +
         "}\nspec: {weight: " + std::to_string(weight) + "}\n";
}

std::string queue_names(const daemon& d) {
  return d.ctl({"get", "queues", "-o", "name"}).out;
}

class CliApplyErrors : public daemon_test {};

TEST_F(CliApplyErrors, AMissingOrMalformedFileIsAUsageErrorAndSendsNothing) {
  scratch_dir dir;
  auto good = dir.write("good.yaml", queue_yaml("good", 1));
  auto r = ctl({"apply", "-f", good, "-f", dir.path() + "/missing.yaml"});
  EXPECT_TRUE(failed_with(r, 2));
  EXPECT_EQ(r.err, "error: the path \"" + dir.path() + "/missing.yaml\" does not exist\n");
  auto broken = dir.write("broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n");
  r = ctl({"apply", "-f", good, "-f", broken});
  EXPECT_TRUE(failed_with(r, 2));
  EXPECT_NE(r.err.find("error: " + broken + ": invalid YAML at line"), std::string::npos) << r.err;
  EXPECT_EQ(queue_names(*d_), "queue.scheduling.volcano.sh/default\n") << "nothing was sent";
}

TEST_F(CliApplyErrors, AnUnknownKindIsAUsageErrorNamingTheDocument) {
  ctl_options in;
  in.input = queue_yaml("ok", 1) +
             "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
             "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: old}\n"
             "---\nkind: Queue\nmetadata: {name: noversion}\n";
  auto r = ctl({"apply", "-f", "-"}, in);
  EXPECT_TRUE(failed_with(r, 2));
  EXPECT_NE(r.err.find("error: STDIN: document 2 (\"web\"): no matches for kind \"Deployment\" in "
                       "version \"apps/v1\""),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("error: STDIN: document 3 (\"old\"): no matches for kind \"Job\" in version "
                       "\"batch/v1\"; Phalanx serves kind \"Job\" in version "
                       "\"batch.volcano.sh/v1alpha1\""),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("error: STDIN: document 4 (\"noversion\"): apiVersion: Required value"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(queue_names(*d_), "queue.scheduling.volcano.sh/default\n") << "nothing was sent";
}

TEST_F(CliApplyErrors, AnInvalidQuantityGetsTheServersFieldAndRuleAndTheRestIsApplied) {
  ctl_options in;
  in.input = "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers:\n"
             "    - name: c\n      image: i\n      resources: {requests: {cpu: two}}\n---\n" +
             queue_yaml("after", 1);
  auto r = ctl({"apply", "-f", "-"}, in);
  EXPECT_TRUE(failed_with(r, 1));
  EXPECT_EQ(r.out, "queue.scheduling.volcano.sh/after created\n");
  EXPECT_NE(r.err.find("Error from server (Invalid): error when creating \"STDIN\": Pod \"bad\" is "
                       "invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "
                       "\"two\": is not a quantity"),
            std::string::npos)
      << r.err;
  // Several broken rules are all named.
  in.input = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\n"
             "spec: {queue: Bad_Queue, minTaskMember: {ps: -1}, minResources: {memory: 2x}}\n";
  r = ctl({"apply", "-f", "-"}, in);
  EXPECT_TRUE(failed_with(r, 1));
  EXPECT_NE(r.err.find("spec.minResources[memory]: Invalid value: \"2x\": has an unknown suffix"),
            std::string::npos)
      << r.err;
  in.input = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\n"
             "spec: {queue: Bad_Queue, minTaskMember: {ps: -1}}\n";
  r = ctl({"apply", "-f", "-"}, in);
  EXPECT_TRUE(failed_with(r, 1));
  EXPECT_NE(r.err.find("spec.minTaskMember[ps]: Invalid value: -1: must be greater than or equal "
                       "to 0"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("spec.queue: Invalid value: \"Bad_Queue\": must be a lowercase RFC 1123 "
                       "subdomain"),
            std::string::npos)
      << r.err;
}

TEST_F(CliApplyErrors, AnExistingObjectIsUnchangedConfiguredOrReportedAsDifferent) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(queue_yaml("q1", 1)))));
  auto same = ctl({"apply", "-f", "-"}, with_input(queue_yaml("q1", 1)));
  ASSERT_TRUE(succeeded(same));
  EXPECT_EQ(same.out, "queue.scheduling.volcano.sh/q1 unchanged\n");

  auto r = ctl({"apply", "-f", "-"}, with_input(queue_yaml("q1", 5) + "---\n" + queue_yaml("q2", 1)));
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "queue.scheduling.volcano.sh/q1 configured\n"
                   "queue.scheduling.volcano.sh/q2 created\n");
  EXPECT_EQ(row_of(ctl({"get", "q", "q1"}).out, "q1").at(1), "5");

  // A job's replicas change as Volcano lets them; its template does not: reported in
  // Volcano's words, and apply goes on.
  auto job = [](int replicas, const std::string& image) {
    return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j1}\nspec:\n"
           "  tasks:\n  - name: w\n    replicas: " + std::to_string(replicas) +
           "\n    template:\n      spec:\n        containers: [{name: c, image: " + image + "}]\n";
  };
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(job(1, "i")))));
  auto scaled = ctl({"apply", "-f", "-"}, with_input(job(2, "i") + "---\n" + queue_yaml("q3", 1)));
  ASSERT_TRUE(succeeded(scaled)) << scaled.err;
  EXPECT_EQ(scaled.out, "job.batch.volcano.sh/j1 configured\n"
                        "queue.scheduling.volcano.sh/q3 created\n");
  auto differs = ctl({"apply", "-f", "-"}, with_input(job(2, "other") + "---\n" +
                                                      queue_yaml("q4", 1)));
  EXPECT_TRUE(failed_with(differs, 1));
  EXPECT_EQ(differs.out, "queue.scheduling.volcano.sh/q4 created\n");
  EXPECT_NE(differs.err.find("job updates may not change fields other than `minAvailable`"),
            std::string::npos)
      << differs.err;
}

TEST_F(CliApplyErrors, ANodesUnschedulableIsConfiguredThroughPatch) {
  std::string node = "apiVersion: v1\nkind: Node\nmetadata: {name: extra}\nspec: {unschedulable: "
                     "%s}\nstatus: {allocatable: {cpu: \"4\", memory: 8Gi}}\n";
  auto with = [&](const char* v) {
    std::string s = node;
    s.replace(s.find("%s"), 2, v);
    return s;
  };
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(with("false")))));
  auto r = ctl({"apply", "-f", "-"}, with_input(with("true")));
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "node/extra configured\n");
  EXPECT_EQ(row_of(ctl({"get", "nodes"}).out, "extra").at(1), "Ready,SchedulingDisabled");
  EXPECT_EQ(ctl({"apply", "-f", "-"}, with_input(with("true"))).out, "node/extra unchanged\n");
  // Its status is the server's to write: a manifest that differs there is reported.
  std::string bigger = with("true");
  bigger.replace(bigger.find("cpu: \"4\""), 8, "cpu: \"8\"");
  auto d = ctl({"apply", "-f", "-"}, with_input(bigger));
  EXPECT_TRUE(failed_with(d, 1));
  EXPECT_NE(d.err.find("status.allocatable.cpu: the manifest has \"8\", the server has \"4\""),
            std::string::npos)
      << d.err;
}

TEST_F(CliApplyErrors, DirectoriesAndNamespaces) {
  scratch_dir dir;
  dir.write("1-queue.yaml", queue_yaml("dq", 3));
  dir.write("2-pod.json", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"jp"},)"
                          R"("spec":{"containers":[{"name":"c","image":"i"}]}})");
  dir.write("notes.txt", "not a manifest");
  auto r = ctl({"apply", "-f", dir.path(), "-n", "team"});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "queue.scheduling.volcano.sh/dq created\npod/jp created\n");
  EXPECT_EQ(ctl({"get", "pods", "-n", "team", "-o", "name"}).out, "pod/jp\n");
  // A document's namespace that contradicts -n is refused before anything is sent.
  auto clash = ctl({"apply", "-f", "-", "-n", "team"},
                   with_input("apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: other}\n"
                              "spec: {containers: [{name: c, image: i}]}\n"));
  EXPECT_TRUE(failed_with(clash, 2));
  EXPECT_NE(clash.err.find("the namespace from the provided object \"other\" does not match the "
                           "namespace \"team\""),
            std::string::npos)
      << clash.err;
}

TEST_F(CliApplyErrors, UsageErrorsExitTwo) {
  for (auto args : std::vector<std::vector<std::string>>{
         {"get"}, {"get", "deployments"}, {"frob"}, {"get", "pods", "--bogus"},
         {"apply"}, {"get", "pods", "-o", "table"}, {"delete", "pods"}}) {
    auto r = ctl(args);
    EXPECT_TRUE(failed_with(r, 2)) << args.front();
    EXPECT_NE(r.err.find("See 'phalanxctl --help' for usage."), std::string::npos) << r.err;
  }
  auto bad_server = run_ctl({"get", "pods", "--server", "ftp://x"});
  EXPECT_TRUE(failed_with(bad_server, 2));
  EXPECT_NE(bad_server.err.find("the scheme must be http:// or https://"), std::string::npos)
      << bad_server.err;
}

// A port nothing listens on: bind one, then close it.
uint16_t closed_port() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  auto port = a.local_endpoint().port();
  a.close();
  return port;
}

TEST(CliUnreachable, CannotConnectExitsThreeWithTheAddress) {
  std::string url = "http://127.0.0.1:" + std::to_string(closed_port());
  for (auto args : std::vector<std::vector<std::string>>{
         {"get", "pods"}, {"apply", "-f", example("queues.yaml")}, {"version"},
         {"get", "pods", "-w"}, {"describe", "node", "x"}, {"delete", "pod", "x"},
         {"job", "suspend", "x"}}) {
    args.insert(args.begin(), {"--server", url});
    auto r = run_ctl(args);
    EXPECT_TRUE(failed_with(r, 3)) << args[2];
    EXPECT_NE(r.err.find("error: cannot reach phalanxd at " + url + ": "), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("Connection refused"), std::string::npos) << r.err;
  }
  // PHALANX_SERVER is where it goes without --server.
  ctl_options env;
  env.env["PHALANX_SERVER"] = url;
  auto r = run_ctl({"get", "queues"}, env);
  EXPECT_TRUE(failed_with(r, 3));
  EXPECT_NE(r.err.find(url), std::string::npos) << r.err;
}

class CliAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    token_file_ = dir_.write("token", "s3cret-token\n");
    api::client_options probe;
    probe.token = "s3cret-token";
    d_ = daemon::start({"--token-file", token_file_}, probe);
  }
  scratch_dir dir_;
  std::string token_file_;
  std::unique_ptr<daemon> d_;
};

TEST_F(CliAuth, WithoutATokenTheServerSays401AndTheHintNamesTheFlag) {
  auto r = d_->ctl({"get", "queues"});
  EXPECT_TRUE(failed_with(r, 1));
  EXPECT_NE(r.err.find("Error from server (Unauthorized)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: the server requires a token: pass --token or set PHALANX_TOKEN"),
            std::string::npos)
      << r.err;
  auto wrong = d_->ctl({"get", "queues", "--token", "guess"});
  EXPECT_TRUE(failed_with(wrong, 1));
  EXPECT_NE(wrong.err.find("hint: the server refused the token"), std::string::npos) << wrong.err;
}

TEST_F(CliAuth, TheTokenFromTheFlagOrTheEnvironment) {
  auto r = d_->ctl({"get", "queues", "--token", "s3cret-token", "-o", "name"});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "queue.scheduling.volcano.sh/default\n");
  ctl_options env;
  env.env["PHALANX_TOKEN"] = "s3cret-token";
  env.env["PHALANX_SERVER"] = d_->url();
  auto e = run_ctl({"apply", "-f", example("queues.yaml")}, env);
  ASSERT_TRUE(succeeded(e));
  // A watch sends it too.
  auto w = ctl_process::start({"get", "queues", "-w", "-o", "name", "--request-timeout", "1s"},
                              env);
  ASSERT_TRUE(w->wait_for({"queue.scheduling.volcano.sh/research"})) << w->err();
  auto code = w->wait_exit(std::chrono::seconds(30));
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 0) << w->err();
}

class CliTls : public ::testing::Test {
 protected:
  void SetUp() override {
    cert_ = api::testing::write_self_signed_cert(dir_.path());
    api::client_options probe;
    probe.server.tls = true;
    probe.ca_file = cert_.cert;
    d_ = daemon::start({"--tls-cert", cert_.cert, "--tls-key", cert_.key}, probe);
    ASSERT_EQ(d_->url().rfind("https://", 0), 0u) << d_->url();
  }
  scratch_dir dir_;
  api::testing::cert_paths cert_;
  std::unique_ptr<daemon> d_;
};

TEST_F(CliTls, TheCertificateAuthorityFlagOrSkippingVerification) {
  auto r = d_->ctl({"get", "queues", "-o", "name", "--certificate-authority", cert_.cert});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "queue.scheduling.volcano.sh/default\n");
  auto insecure = d_->ctl({"apply", "-f", example("queues.yaml"), "--insecure-skip-tls-verify"});
  ASSERT_TRUE(succeeded(insecure));
  auto untrusted = d_->ctl({"get", "queues"});
  EXPECT_TRUE(failed_with(untrusted, 3));
  EXPECT_NE(untrusted.err.find("TLS handshake"), std::string::npos) << untrusted.err;
  EXPECT_NE(untrusted.err.find("hint: for a self-signed certificate pass --certificate-authority"),
            std::string::npos)
      << untrusted.err;
  auto missing = d_->ctl({"get", "queues", "--certificate-authority", dir_.path() + "/none.pem"});
  EXPECT_TRUE(failed_with(missing, 2));
  EXPECT_NE(missing.err.find("--certificate-authority: the file"), std::string::npos)
      << missing.err;
  // A watch over TLS.
  auto w = ctl_process::start(d_->args({"get", "queues", "-w", "-o", "name",
                                        "--certificate-authority", cert_.cert}));
  ASSERT_TRUE(w->wait_for({"queue.scheduling.volcano.sh/research"})) << w->err();
  w->stop();
}

} // namespace
} // namespace phalanx::cli_test
