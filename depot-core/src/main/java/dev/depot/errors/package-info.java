/** Exceptions Depot throws, part of the public API, and the table of their codes ({@link dev.depot.errors.ErrorCode}). */
package dev.depot.errors;
