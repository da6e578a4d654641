"""The campaign's attacks on the irtt reflector and client (issue 33 items 3, 8, 9). Mixed into campaign.Campaign; each attack
adds its row with self.row(...), as fleet.py's do."""


class IrttAttacks:
    def irtt_attacks(self):
        attacks = []
        for attack in attacks:
            try:
                attack()
            except Exception as e:  # one attack's failure is its row, not the campaign's end
                self.row(attack.__name__, "-", False, (None, None), (None, None),
                         f"attack failed: {e!r}", False)
