// The listening socket of the daemon's HTTP front; see http_listen.hpp.
#include "apps/common/api/front/http_listen.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/socket_base.hpp>

#include "messages/errc.hpp"

namespace mneme::api {

namespace net = boost::asio;
using tcp = net::ip::tcp;

caf::expected<int> open_listener(net::io_context& ioc, std::optional<tcp::acceptor>& acceptor,
                                 const std::string& host, int port) {
  auto failure = [&](const std::string& why) {
    return caf::make_error(errc::internal,
                           "cannot listen on " + host + ":" + std::to_string(port) + ": " + why);
  };
  boost::system::error_code ec;
  tcp::endpoint ep;
  auto address = net::ip::make_address(host, ec);
  if (!ec) {
    ep = tcp::endpoint{address, static_cast<unsigned short>(port)};
  } else {
    tcp::resolver resolver{ioc};
    auto found = resolver.resolve(host, std::to_string(port), ec);
    if (ec || found.empty())
      return failure("unknown host");
    ep = found.begin()->endpoint();
  }
  auto& acc = acceptor.emplace(ioc);
  auto fail = [&](const std::string& why) {
    boost::system::error_code ignored;
    acc.close(ignored);
    acceptor.reset();
    return failure(why);
  };
  acc.open(ep.protocol(), ec);
  if (ec)
    return fail(ec.message());
  acc.set_option(net::socket_base::reuse_address(true), ec);
  acc.bind(ep, ec);
  if (ec)
    return fail(ec == net::error::address_in_use ? "port " + std::to_string(port) + " is in use"
                                                 : ec.message());
  acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return fail(ec.message());
  return static_cast<int>(acc.local_endpoint().port());
}

} // namespace mneme::api
