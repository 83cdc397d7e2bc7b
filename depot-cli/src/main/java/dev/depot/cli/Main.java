package dev.depot.cli;

/** The {@code depot} command (placeholder until the CLI lands). */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.err.println("depot: not implemented yet");
        System.exit(1);
    }
}
