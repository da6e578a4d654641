"""The campaign's attacks on the misura's own protocol client, calibration and stored-run inputs (issue 33 items 7, 9-12, 13). Mixed into campaign.Campaign; each attack
adds its row with self.row(...), as fleet.py's do."""


class InputAttacks:
    def input_attacks(self):
        attacks = []
        for attack in attacks:
            try:
                attack()
            except Exception as e:  # one attack's failure is its row, not the campaign's end
                self.row(attack.__name__, "-", False, (None, None), (None, None),
                         f"attack failed: {e!r}", False)
