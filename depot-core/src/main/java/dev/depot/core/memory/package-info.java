/**
 * Access to shared memory with the memory order in the method name.
 *
 * <p>Naming, as in JCTools and Agrona:
 * <ul>
 *   <li>{@code get*Plain} / {@code put*Plain}: no ordering; only for data that no other process reads
 *       concurrently (for example fields written before a release store publishes them).</li>
 *   <li>{@code get*Acquire}: later loads and stores of this thread are not moved before it. Pairs with a
 *       {@code put*Release} in the writing process: a reader that sees the released value sees everything
 *       written before the release.</li>
 *   <li>{@code put*Release}: earlier loads and stores are not moved after it.</li>
 *   <li>{@code get*Volatile} / {@code put*Volatile}, {@code compareAndSet*}, {@code getAndAdd*}: sequentially
 *       consistent. Used where two processes each store then load (Dekker style: a pinner stores its pin record
 *       then loads the object state, a deleter stores the state then loads the pin records), where
 *       acquire/release is not enough.</li>
 * </ul>
 * Every atomic field is naturally aligned; {@link dev.depot.core.memory.Atomics} checks it.
 */
package dev.depot.core.memory;
