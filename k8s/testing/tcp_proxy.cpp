#include "k8s/testing/tcp_proxy.hpp"

#include "api/client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace phalanx::k8s::testing {

namespace {

// One forwarded connection: bytes read from one side wait in a buffer until the other side
// takes them.
struct pipe_pair {
  int down = -1;  // The client's side.
  int up = -1;    // The target's side.
  std::string to_up;
  std::string to_down;
  bool down_eof = false;
  bool up_eof = false;
  bool down_shut = false;  // shutdown(SHUT_WR) passed on.
  bool up_shut = false;
};

void close_fd(int& fd) {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

int connect_to(const std::string& host, uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// Moves what `from` has into `buffer`; false on EOF or error.
bool pull(int from, std::string& buffer) {
  char chunk[16384];
  ssize_t n = ::read(from, chunk, sizeof chunk);
  if (n > 0) {
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

// Writes what it can of `buffer` to `to`; false on error.
bool push(int to, std::string& buffer) {
  if (buffer.empty())
    return true;
  ssize_t n = ::send(to, buffer.data(), buffer.size(), MSG_NOSIGNAL);
  if (n > 0) {
    buffer.erase(0, static_cast<std::size_t>(n));
    return true;
  }
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

} // namespace

result<std::unique_ptr<tcp_proxy>> tcp_proxy::start(const std::string& target_url) {
  auto address = api::parse_server_address(target_url);
  if (!address)
    return address.error();
  std::unique_ptr<tcp_proxy> p(new tcp_proxy());
  p->scheme_ = address->tls ? "https" : "http";
  p->target_host_ = address->host == "localhost" ? "127.0.0.1" : address->host;
  p->target_port_ = address->port;
  p->listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (p->listener_ < 0)
    return status{errc::io_error, std::string("tcp_proxy: socket: ") + std::strerror(errno)};
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(p->listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(p->listener_, 64) != 0 ||
      ::getsockname(p->listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return status{errc::io_error, std::string("tcp_proxy: listen: ") + std::strerror(errno)};
  ::fcntl(p->listener_, F_SETFL, ::fcntl(p->listener_, F_GETFL) | O_NONBLOCK);
  p->port_ = ntohs(a.sin_port);
  p->thread_ = std::thread([raw = p.get()] { raw->run(); });
  return p;
}

tcp_proxy::~tcp_proxy() {
  stopping_ = true;
  if (thread_.joinable())
    thread_.join();
  close_fd(listener_);
}

std::string tcp_proxy::url() const {
  return scheme_ + "://127.0.0.1:" + std::to_string(port_);
}

void tcp_proxy::freeze() {
  frozen_ = true;
}

void tcp_proxy::thaw() {
  frozen_ = false;
}

void tcp_proxy::cut() {
  cut_requests_.fetch_add(1);
}

void tcp_proxy::run() {
  std::vector<pipe_pair> pairs;
  int cuts_done = 0;
  while (!stopping_) {
    if (int c = cut_requests_.load(); c != cuts_done) {
      cuts_done = c;
      for (auto& p : pairs) {
        close_fd(p.down);
        close_fd(p.up);
      }
      pairs.clear();
    }
    const bool frozen = frozen_.load();
    std::vector<pollfd> fds;
    fds.push_back({listener_, POLLIN, 0});
    for (auto& p : pairs) {
      short down_events = 0, up_events = 0;
      if (!frozen) {
        if (!p.down_eof)
          down_events |= POLLIN;
        if (!p.up_eof)
          up_events |= POLLIN;
        if (!p.to_down.empty())
          down_events |= POLLOUT;
        if (!p.to_up.empty())
          up_events |= POLLOUT;
      }
      fds.push_back({p.down, down_events, 0});
      fds.push_back({p.up, up_events, 0});
    }
    // A short timeout: freeze, thaw, cut and stop are noticed within it.
    ::poll(fds.data(), fds.size(), 20);
    const std::size_t polled = pairs.size();

    if (fds[0].revents & POLLIN) {
      for (;;) {
        int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
          break;
        accepted_.fetch_add(1);
        int up = connect_to(target_host_, target_port_);
        if (up < 0) {
          ::close(fd);
          continue;
        }
        pipe_pair p;
        p.down = fd;
        p.up = up;
        pairs.push_back(std::move(p));
      }
    }
    if (frozen)
      continue;
    for (std::size_t i = 0; i < polled; ++i) {
      auto& p = pairs[i];
      const auto& dfd = fds[1 + 2 * i];
      const auto& ufd = fds[2 + 2 * i];
      bool ok = true;
      if (dfd.revents & (POLLIN | POLLHUP | POLLERR))
        if (!pull(p.down, p.to_up) || (dfd.revents & POLLERR))
          p.down_eof = true;
      if (ufd.revents & (POLLIN | POLLHUP | POLLERR))
        if (!pull(p.up, p.to_down) || (ufd.revents & POLLERR))
          p.up_eof = true;
      ok = push(p.up, p.to_up) && push(p.down, p.to_down);
      // A side that ended: pass the end on once its data is through.
      if (p.down_eof && p.to_up.empty() && !p.up_shut) {
        ::shutdown(p.up, SHUT_WR);
        p.up_shut = true;
      }
      if (p.up_eof && p.to_down.empty() && !p.down_shut) {
        ::shutdown(p.down, SHUT_WR);
        p.down_shut = true;
      }
      if (!ok || (p.down_eof && p.up_eof && p.to_up.empty() && p.to_down.empty())) {
        close_fd(p.down);
        close_fd(p.up);
      }
    }
    std::erase_if(pairs, [](const pipe_pair& p) { return p.down < 0; });
  }
  for (auto& p : pairs) {
    close_fd(p.down);
    close_fd(p.up);
  }
}

} // namespace phalanx::k8s::testing
