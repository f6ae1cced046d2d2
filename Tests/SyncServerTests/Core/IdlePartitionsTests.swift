import Testing

@testable import SyncServer

@Suite("Idle partitions")
struct IdlePartitionsTests {
    @Test("least recently used first; touching moves a name last; removing forgets it")
    func order() {
        var idle = IdlePartitions()
        idle.touch("a")
        idle.touch("b")
        idle.touch("c")
        idle.touch("a")
        idle.remove("b")
        #expect(idle.count == 2)
        #expect(idle.contains("a") && !idle.contains("b"))
        #expect(idle.removeOldest() == "c")
        #expect(idle.removeOldest() == "a")
        #expect(idle.removeOldest() == nil)
        #expect(idle.count == 0)
        idle.touch("d")
        idle.touch("e")
        #expect(idle.removeOldest() == "d")
        #expect(idle.count == 1)
    }
}
