/// What a waveform haptic output rendered in one block of its stream: where the block starts (the
/// stream's frame, and when that frame is heard), and the drive in force at its end (the level's
/// intensity and sharpness, the oscillator's frequency). A trace records one per block.
public struct WaveformBlock: Sendable, Equatable, BitwiseCopyable {
    /// The block's first frame in the stream.
    public var frame: Int64
    /// Frames in the block.
    public var frames: Int32
    /// When the first frame is heard (engine ns, CLOCK_MONOTONIC; 0 before the stream's clock has a fit).
    public var time: UInt64
    /// The continuous level's intensity (0...1).
    public var intensity: Float
    /// The continuous level's sharpness (0...1).
    public var sharpness: Float
    /// The oscillator's frequency (Hz).
    public var frequency: Float
    /// Transient bursts that began in the block.
    public var transients: Int32

    /// Makes a block record.
    public init(frame: Int64, frames: Int32, time: UInt64, intensity: Float, sharpness: Float, frequency: Float, transients: Int32) {
        self.frame = frame
        self.frames = frames
        self.time = time
        self.intensity = intensity
        self.sharpness = sharpness
        self.frequency = frequency
        self.transients = transients
    }
}

/// Takes a waveform output's block records (a trace). `record` is called on the audio thread
/// that renders the blocks, one thread at a time.
public protocol WaveformBlockRecorder: AnyObject, Sendable {
    /// Keeps one block's record. Must not allocate, lock or block.
    func record(_ block: WaveformBlock)
}
