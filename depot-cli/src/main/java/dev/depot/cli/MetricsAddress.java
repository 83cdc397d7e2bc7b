package dev.depot.cli;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * The value of {@code serve --metrics}: {@code HOST:PORT}, {@code [IPV6]:PORT}, or just {@code PORT} (then the
 * loopback address 127.0.0.1: the metrics are served beyond this machine only when a host says so). Port 0
 * takes any free port.
 */
final class MetricsAddress {
    static final String LOOPBACK = "127.0.0.1";

    private MetricsAddress() {
    }

    static InetSocketAddress parse(String text) {
        int colon = text.lastIndexOf(':');
        String host = colon < 0 ? LOOPBACK : text.substring(0, colon);
        String port = text.substring(colon + 1);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty()) {
            host = LOOPBACK;
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            p = -1;
        }
        if (p < 0 || p > 65535) {
            throw new UsageException("--metrics must be HOST:PORT or PORT (e.g. 127.0.0.1:9464), with a port "
                + "0..65535, got '" + text + "'");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), p);
        } catch (UnknownHostException e) {
            throw new UsageException("--metrics host '" + host + "' is unknown; use an address such as "
                + LOOPBACK, e);
        }
    }
}
