package dev.depot.bench.sort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sort demo end to end: worker JVMs on a store of its own, checked against the single-process sort. */
class SortDemoTest {
    @Test
    void shouldSortWithWorkerJvmsAndVerifyAgainstTheSingleProcessSort() throws Exception {
        SortMain.Settings s = SortMain.Settings.parse(new String[] {"--count", "3e5", "--workers", "3", "--specials",
            "--runs", "single,3"});
        SortReport report = SortMain.run(s, null);
        assertTrue(report.verified(), report.json());
        assertEquals(List.of("single", "3"), report.runs().stream().map(SortReport.Run::label).toList());
        long shuffled = report.runs().get(1).shuffledBytes();  // what crossed between workers: about 2/3 of it
        assertTrue(shuffled > 300_000L * Long.BYTES / 2 && shuffled < 300_000L * Long.BYTES, "shuffled " + shuffled);
        String json = report.json();
        for (String field : List.of("\"count\":300000", "\"workers\":3", "\"single_process_s\":", "\"depot_s\":",
            "\"speedup\":", "\"verified\":true")) {
            assertTrue(json.contains(field), field + " in " + json);
        }
        ByteArrayOutputStream table = new ByteArrayOutputStream();
        report.print(new PrintStream(table, true, StandardCharsets.UTF_8));
        String text = table.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("depot, 3 workers") && text.contains("single process (Arrays.sort)")
            && text.contains("20-core estimate") && text.contains("worker 2") && text.contains("local sort"), text);
        assertTrue(json.contains("\"processes\":[{\"values\":"), json);
    }

    @Test
    void shouldSortWithTheBucketedLocalSortAndVerify() throws Exception {
        SortMain.Settings s = SortMain.Settings.parse(new String[] {"--count", "3e5", "--workers", "3", "--dtype", "int64",
            "--specials", "--runs", "1,3", "--local-sort", "buckets"});
        SortReport report = SortMain.run(s, null);
        assertTrue(report.verified(), report.json());
        assertTrue(report.json().contains("\"local_sort\":\"buckets\""), report.json());
        long shuffled = report.runs().get(1).shuffledBytes();  // what crossed between workers, not what was staged
        assertTrue(shuffled > 300_000L * Long.BYTES / 2 && shuffled < 300_000L * Long.BYTES, "shuffled " + shuffled);
    }
}
