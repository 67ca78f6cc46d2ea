"""The Java side: finding a Java 21+ runtime, starting the one JVM, and compiling java/ into our jar."""
