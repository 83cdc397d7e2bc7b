/**
 * Not API: clients over a store their own process opened (the daemon, an embedding application, one session per
 * control connection), and the store under a client, for Depot's daemon and tools; exported only to them.
 */
package dev.depot.client.internal;
