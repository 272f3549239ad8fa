/// Line simplification with a vertical error bound (Ramer–Douglas–Peucker, measured along the
/// value axis): keeps the fewest points it finds such that every dropped sample lies within
/// `tolerance` of the straight line between the kept points around it. The first and last points
/// are always kept. Used for the generated curves, where the error that matters is in the value
/// (intensity, sharpness) at a time, not the distance from the line.
public enum LineSimplification {
    /// The indices of the points of `(time, value)` samples (times ascending) to keep.
    public static func keep(_ points: [(time: Double, value: Double)], tolerance: Double) -> [Int] {
        guard points.count > 2 else { return Array(points.indices) }
        var kept = [Bool](repeating: false, count: points.count)
        kept[0] = true
        kept[points.count - 1] = true
        var stack = [(0, points.count - 1)]
        while let (a, b) = stack.popLast() {
            guard b > a + 1 else { continue }
            let (ta, va) = points[a], (tb, vb) = points[b]
            var worst = -1.0, at = -1
            for i in (a + 1)..<b {
                let line = tb > ta ? va + (vb - va) * (points[i].time - ta) / (tb - ta) : va
                let error = abs(points[i].value - line)
                if error > worst { worst = error; at = i }
            }
            if worst > tolerance {
                kept[at] = true
                stack.append((a, at))
                stack.append((at, b))
            }
        }
        return kept.indices.filter { kept[$0] }
    }
}
