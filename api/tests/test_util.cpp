#include "api/tests/test_util.hpp"

#include "api/client.hpp"
#include "api/testing/tls_files.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>


#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <variant>

extern char** environ;

namespace phalanx::api::test {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

std::string response::header(const std::string& lowercase_name) const {
  auto it = headers.find(lowercase_name);
  return it == headers.end() ? std::string() : it->second;
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <class Fields>
std::map<std::string, std::string> header_map(const Fields& f) {
  std::map<std::string, std::string> out;
  for (const auto& h : f)
    out[lower(std::string(h.name_string()))] = std::string(h.value());
  return out;
}

api::client_options client_options_for(uint16_t port, const tls_client_options& tls) {
  api::client_options o;
  o.server.tls = tls.enabled;
  o.server.host = "127.0.0.1";
  o.server.port = port;
  o.ca_file = tls.ca_file;
  o.insecure_skip_verify = tls.enabled && tls.ca_file.empty();
  o.timeout = std::chrono::seconds(20);
  o.user_agent = "phalanx-api-test";
  return o;
}

api::client_request to_http_request(const request& r) {
  api::client_request out;
  out.method = r.method;
  out.target = r.target;
  out.body = r.body;
  out.content_type = r.content_type;
  out.accept = r.accept;
  out.headers = r.headers;
  if (!r.token.empty())
    out.headers.emplace_back("Authorization", "Bearer " + r.token);
  return out;
}

} // namespace

// ---------------------------------------------------------------------------------------------

struct client::impl {
  impl(uint16_t port, const tls_client_options& tls) : http(client_options_for(port, tls)) {}
  api::http_client http;
};

client::client(uint16_t port, tls_client_options tls)
  : impl_(std::make_unique<impl>(port, tls)) {}
client::~client() = default;
response client::send(const request& r) {
  auto res = impl_->http.send(to_http_request(r));
  if (!res)
    throw std::runtime_error("http: " + res.error().message());
  response out;
  out.status = res->status;
  out.body = std::move(res->body);
  out.headers = std::move(res->headers);
  return out;
}
int client::connections_opened() const {
  return impl_->http.connections_opened();
}

response call(uint16_t port, const request& r, tls_client_options tls) {
  client c{port, std::move(tls)};
  return c.send(r);
}

response get(uint16_t port, const std::string& target, const std::string& accept) {
  request r;
  r.target = target;
  r.accept = accept;
  return call(port, r);
}

// ---------------------------------------------------------------------------------------------

struct raw_connection::impl {
  net::io_context ioc;
  tcp::socket socket{ioc};
  beast::flat_buffer buffer;
  // A read saw the end of the stream (or a reset). Kept, because asio does not always report
  // the end again to a later read on the same socket.
  bool peer_closed = false;
};

raw_connection::raw_connection(uint16_t port) : impl_(std::make_unique<impl>()) {
  impl_->socket.connect({net::ip::make_address("127.0.0.1"), port});
}

raw_connection::~raw_connection() = default;

bool raw_connection::write(const std::string& bytes) {
  beast::error_code ec;
  net::write(impl_->socket, net::buffer(bytes), ec);
  return !ec;
}

std::string raw_connection::read_until_close(std::chrono::milliseconds timeout) {
  std::string out;
  bool done = false;
  std::array<char, 4096> buf{};
  std::function<void()> read = [&] {
    impl_->socket.async_read_some(net::buffer(buf), [&](beast::error_code ec, std::size_t n) {
      out.append(buf.data(), n);
      if (ec) {
        impl_->peer_closed = ec != net::error::operation_aborted;
        done = true;
        return;
      }
      read();
    });
  };
  read();
  impl_->ioc.restart();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done && std::chrono::steady_clock::now() < deadline)
    impl_->ioc.run_one_for(std::chrono::milliseconds(20));
  if (!done) {
    impl_->socket.cancel();
    impl_->ioc.restart();
    impl_->ioc.run_for(std::chrono::milliseconds(100));
  }
  return out;
}

std::optional<response> raw_connection::read_response(std::chrono::milliseconds timeout) {
  bool done = false;
  beast::error_code result;
  http::response_parser<http::string_body> parser;
  http::async_read(impl_->socket, impl_->buffer, parser,
                   [&](beast::error_code ec, std::size_t) {
                     result = ec;
                     done = true;
                   });
  impl_->ioc.restart();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done && std::chrono::steady_clock::now() < deadline)
    impl_->ioc.run_one_for(std::chrono::milliseconds(20));
  if (!done) {
    impl_->socket.cancel();
    impl_->ioc.restart();
    impl_->ioc.run_for(std::chrono::milliseconds(100));
    return std::nullopt;
  }
  if (result && !parser.is_header_done())
    return std::nullopt;
  auto m = parser.release();
  response out;
  out.status = static_cast<int>(m.result_int());
  out.body = m.body();
  out.headers = header_map(m.base());
  return out;
}

bool raw_connection::closed_within(std::chrono::milliseconds timeout) {
  if (impl_->peer_closed)
    return true;
  bool closed = false;
  bool done = false;
  std::array<char, 4096> buf{};
  std::function<void()> read = [&] {
    impl_->socket.async_read_some(net::buffer(buf), [&](beast::error_code ec, std::size_t) {
      if (ec) {
        // Cancelled at the timeout: still open.
        closed = ec != net::error::operation_aborted;
        done = true;
        return;
      }
      read();
    });
  };
  read();
  impl_->ioc.restart();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done && std::chrono::steady_clock::now() < deadline)
    impl_->ioc.run_one_for(std::chrono::milliseconds(20));
  if (!done) {
    impl_->socket.cancel();
    impl_->ioc.restart();
    impl_->ioc.run_for(std::chrono::milliseconds(100));
  }
  impl_->peer_closed = closed;
  return closed;
}

// ---------------------------------------------------------------------------------------------

struct watch_stream::impl {
  std::unique_ptr<api::watch_stream> stream;
};

watch_stream::watch_stream(uint16_t port, const request& r, tls_client_options tls)
  : impl_(std::make_unique<impl>()) {
  auto s = api::watch_stream::open(client_options_for(port, tls), to_http_request(r));
  if (!s)
    throw std::runtime_error("watch: " + s.error().message());
  impl_->stream = std::move(*s);
}

watch_stream::~watch_stream() {
  close();
}

int watch_stream::status() const {
  return impl_->stream->status();
}

std::string watch_stream::header(const std::string& lowercase_name) const {
  return impl_->stream->header(lowercase_name);
}

std::optional<std::string> watch_stream::next_line(std::chrono::milliseconds timeout) {
  return impl_->stream->next_line(timeout);
}

bool watch_stream::ended_cleanly() const {
  return impl_->stream->ended_cleanly();
}

void watch_stream::close() {
  impl_->stream->close();
}

// ---------------------------------------------------------------------------------------------

temp_dir::temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "phalanx-api-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string temp_dir::write(const std::string& name, const std::string& content) const {
  std::string p = path_ + "/" + name;
  std::ofstream out(p, std::ios::binary);
  out << content;
  return p;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

cert_files make_self_signed_cert(const temp_dir& dir) {
  auto files = testing::write_self_signed_cert(dir.path());
  return {files.cert, files.key};
}

command_result run_command(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                           const std::map<std::string, std::string>& env) {
  command_result out;
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0)
    return out;
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string s = *e;
    auto eq = s.find('=');
    if (eq != std::string::npos && env.count(s.substr(0, eq)) != 0)
      continue;
    env_strings.push_back(s);
  }
  for (const auto& [k, v] : env)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> cargs;
  for (auto& a : args)
    cargs.push_back(a.data());
  cargs.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0)
      ::dup2(devnull, 0);
    ::execve(cargs[0], cargs.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    int r = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0)
      break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
        continue;
      char buf[4096];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? out.out : out.err).append(buf, std::size_t(n));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0)
      ::close(f.fd);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!killed && WIFEXITED(status))
    out.exit_code = WEXITSTATUS(status);
  return out;
}

} // namespace phalanx::api::test
