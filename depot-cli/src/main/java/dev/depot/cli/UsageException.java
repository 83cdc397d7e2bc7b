package dev.depot.cli;

/**
 * The command line is wrong in a way only the command itself can tell (two options that exclude each other, a
 * value out of range): the CLI prints the message and the command's short usage, and exits with status 2.
 * picocli's own {@code ParameterException}s (unknown option, missing value) end the same way.
 */
final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
        super(message);
    }

    UsageException(String message, Throwable cause) {
        super(message, cause);
    }
}
