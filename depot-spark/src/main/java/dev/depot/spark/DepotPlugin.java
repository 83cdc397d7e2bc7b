package dev.depot.spark;

import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.apache.spark.SparkContext;

/**
 * {@code spark.plugins=dev.depot.spark.DepotPlugin}: attaches the driver and each executor to its node's Depot
 * daemon when they start (starting one if none runs, per {@code spark.depot.daemon}), and releases a task's pins
 * when the task ends, successful or not.
 */
public final class DepotPlugin implements SparkPlugin {
    @Override
    public DriverPlugin driverPlugin() {
        return new DriverPlugin() {
            @Override
            public Map<String, String> init(SparkContext sc, PluginContext ctx) {
                attach(ctx.conf());
                return Map.of();
            }
        };
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return new ExecutorPlugin() {
            @Override
            public void init(PluginContext ctx, Map<String, String> extraConf) {
                attach(ctx.conf());
            }

            @Override
            public void onTaskSucceeded() {
                TaskPins.releaseCurrentTask();
            }

            @Override
            public void onTaskFailed(TaskFailedReason failureReason) {
                TaskPins.releaseCurrentTask();
            }

            @Override
            public void shutdown() {
                DepotNode.closeAll();
            }
        };
    }

    static void attach(SparkConf conf) {
        DepotNode.attach(DepotNode.directory(conf.get(DepotNode.DIR_CONF, null)),
            DepotNode.parseBytes(conf.get(DepotNode.CAPACITY_CONF, DepotNode.CAPACITY_DEFAULT)),
            DepotNode.DaemonMode.valueOf(conf.get(DepotNode.DAEMON_CONF, DepotNode.DAEMON_DEFAULT).toUpperCase()));
    }
}
