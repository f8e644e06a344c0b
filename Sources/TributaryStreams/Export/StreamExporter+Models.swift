import Foundation
import Tributary

extension StreamExporter {
    /// Writes `model.json` beside the manifest when it is missing: the model in force where
    /// the stream starts (the source may have grown since, its schema records following in
    /// the stream), else the store's model. Starts the manifest's list of model versions.
    func writeStartingModel(store: PersistentStore, startToken: Int64) throws {
        let url = directory.appendingPathComponent(StreamManifest.modelFileName)
        let isNew = manifest.segments.isEmpty && manifest.snapshot == nil && manifest.completeThrough == 0
        if !FileManager.default.fileExists(atPath: url.path) {
            var model = store.model
            if isNew, !options.snapshot, let then = try? coordinator.model(at: PersistentHistoryToken(value: startToken, storeID: storeID)) { model = then }
            try DurableFile.write(model.canonicalJSON(), to: url)
        }
        guard manifest.models == nil else { return }
        if isNew {
            startModels(at: StreamPosition(token: startToken, index: 0))
        } else if let first = manifest.segments.first?.first, let data = FileManager.default.contents(atPath: url.path),
                  let model = try? ManagedObjectModel.fromJSON(data) {
            // A stream written before schema records: its model from its first record on.
            manifest.models = [StreamManifest.ModelVersion(position: first, version: model.versionHash)]
        }
    }

    /// Makes `model.json`'s model the first model version, in force from `position`.
    func startModels(at position: StreamPosition) {
        let url = directory.appendingPathComponent(StreamManifest.modelFileName)
        guard let data = FileManager.default.contents(atPath: url.path), let model = try? ManagedObjectModel.fromJSON(data) else { return }
        manifest.models = [StreamManifest.ModelVersion(position: position, version: model.versionHash)]
    }

    /// Lists in the manifest the model versions of the schema records written through `last`
    /// (the segment just completed), replacing any listed at or after them.
    func listModels(through last: StreamPosition) {
        let listed = pendingModels.filter { $0.position <= last }
        guard !listed.isEmpty else { return }
        pendingModels.removeAll { $0.position <= last }
        guard let models = manifest.models, let start = models.first else { return }
        manifest.models = [start] + models.dropFirst().filter { $0.position < listed[0].position } + listed
    }
}
