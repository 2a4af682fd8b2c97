//! The enumerations that describe a sampled meter value.

use super::spec_enum::spec_enum;

spec_enum! {
    /// Why the value was sampled; absent means `Sample.Periodic`.
    ReadingContext {
        InterruptionBegin = "Interruption.Begin",
        InterruptionEnd = "Interruption.End",
        SampleClock = "Sample.Clock",
        SamplePeriodic = "Sample.Periodic",
        TransactionBegin = "Transaction.Begin",
        TransactionEnd = "Transaction.End",
        Trigger = "Trigger",
        Other = "Other",
    }
}

spec_enum! {
    /// Whether `value` is a plain number or signed data; absent means `Raw`.
    ValueFormat {
        Raw = "Raw",
        SignedData = "SignedData",
    }
}

spec_enum! {
    /// What was measured; absent means `Energy.Active.Import.Register`.
    Measurand {
        EnergyActiveExportRegister = "Energy.Active.Export.Register",
        EnergyActiveImportRegister = "Energy.Active.Import.Register",
        EnergyReactiveExportRegister = "Energy.Reactive.Export.Register",
        EnergyReactiveImportRegister = "Energy.Reactive.Import.Register",
        EnergyActiveExportInterval = "Energy.Active.Export.Interval",
        EnergyActiveImportInterval = "Energy.Active.Import.Interval",
        EnergyReactiveExportInterval = "Energy.Reactive.Export.Interval",
        EnergyReactiveImportInterval = "Energy.Reactive.Import.Interval",
        PowerActiveExport = "Power.Active.Export",
        PowerActiveImport = "Power.Active.Import",
        PowerOffered = "Power.Offered",
        PowerReactiveExport = "Power.Reactive.Export",
        PowerReactiveImport = "Power.Reactive.Import",
        PowerFactor = "Power.Factor",
        CurrentImport = "Current.Import",
        CurrentExport = "Current.Export",
        CurrentOffered = "Current.Offered",
        Voltage = "Voltage",
        Frequency = "Frequency",
        Temperature = "Temperature",
        SoC = "SoC",
        Rpm = "RPM",
    }
}

spec_enum! {
    /// Which phase(s) the value applies to; absent means unspecified.
    Phase {
        L1 = "L1",
        L2 = "L2",
        L3 = "L3",
        N = "N",
        L1N = "L1-N",
        L2N = "L2-N",
        L3N = "L3-N",
        L1L2 = "L1-L2",
        L2L3 = "L2-L3",
        L3L1 = "L3-L1",
    }
}

spec_enum! {
    /// Where the value was measured; absent means `Outlet`.
    Location {
        Cable = "Cable",
        Ev = "EV",
        Inlet = "Inlet",
        Outlet = "Outlet",
        Body = "Body",
    }
}

spec_enum! {
    /// Unit of `value`; absent means `Wh`. Both `Celcius` (the schema's historic typo)
    /// and `Celsius` are valid and kept apart so `as_str` echoes what was sent.
    /// `Hertz` is in the MeterValues schema only, not in StopTransaction's.
    UnitOfMeasure {
        Wh = "Wh",
        KWh = "kWh",
        Varh = "varh",
        KVarh = "kvarh",
        W = "W",
        KW = "kW",
        Va = "VA",
        KVa = "kVA",
        Var = "var",
        KVar = "kvar",
        A = "A",
        V = "V",
        K = "K",
        Celcius = "Celcius",
        Celsius = "Celsius",
        Fahrenheit = "Fahrenheit",
        Percent = "Percent",
        Hertz = "Hertz",
    }
}
