package dev.depot.core.testing;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Checks that every {@code *_OFFSET} constant of a descriptor names a member of a struct declared in a test, at
 * the same offset: a field added to a descriptor but not to its struct fails the build.
 */
public final class DescriptorCoverage {
    private DescriptorCoverage() {
    }

    /** {@code CLIENT_TABLE_OFFSET_OFFSET} names member {@code clientTableOffset}. */
    static String memberName(String constant) {
        String base = constant.substring(0, constant.length() - "_OFFSET".length());
        StringBuilder b = new StringBuilder();
        for (String part : base.toLowerCase(Locale.ROOT).split("_")) {
            b.append(b.isEmpty() ? part : Character.toUpperCase(part.charAt(0)) + part.substring(1));
        }
        return b.toString();
    }

    public static void assertEveryOffsetIsAMember(Class<?> descriptor, GroupLayout layout) throws IllegalAccessException {
        int checked = 0;
        for (Field f : descriptor.getDeclaredFields()) {
            int m = f.getModifiers();
            if (!Modifier.isStatic(m) || !Modifier.isPublic(m) || f.getType() != int.class || !f.getName().endsWith("_OFFSET")) {
                continue;
            }
            String member = memberName(f.getName());
            List<MemoryLayout.PathElement> path = find(layout, member);
            if (path == null) {
                fail(descriptor.getSimpleName() + "." + f.getName() + " has no member '" + member + "' in the test's struct");
            }
            assertEquals(f.getInt(null), layout.byteOffset(path.toArray(MemoryLayout.PathElement[]::new)),
                descriptor.getSimpleName() + "." + f.getName());
            checked++;
        }
        if (checked == 0) {
            fail(descriptor.getSimpleName() + " has no *_OFFSET constants");
        }
    }

    private static List<MemoryLayout.PathElement> find(GroupLayout group, String member) {
        for (MemoryLayout l : group.memberLayouts()) {
            if (l.name().filter(member::equals).isPresent()) {
                return new ArrayList<>(List.of(groupElement(member)));
            }
            if (l instanceof GroupLayout inner && inner.name().isPresent()) {
                List<MemoryLayout.PathElement> sub = find(inner, member);
                if (sub != null) {
                    sub.addFirst(groupElement(inner.name().get()));
                    return sub;
                }
            }
        }
        return null;
    }
}
